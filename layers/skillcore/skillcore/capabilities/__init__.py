"""User-defined capabilities (seed 004): structured workflows stored as structure, rendered by the server."""
