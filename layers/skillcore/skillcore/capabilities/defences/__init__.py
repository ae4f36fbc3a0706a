"""The structural defences of user-defined capabilities (seed 004), one module each, in this order of trust:

1. `text_filter`: a best-effort pattern filter over the user-written texts. A hint, not a boundary.
2. `references`: every step references a declared, existing platform capability or a declared binding.
3. `schema_subset`: a binding's input schema is a small JSON Schema draft-07 subset, within size limits.
4. `narrowing`: a rendered protocol carries only the platform capabilities and bindings its steps reference;
   the renderer (capabilities/protocol.py) uses it. It refuses nothing, it only leaves out.

Each returns a list of error entries (`[]` when it passes); the service runs them in this order after the
request's shape was checked and answers the first one that finds anything (`unsafe_text`,
`unknown_reference`, `schema_not_allowed`).
"""
