"""The HTTP face of skillcore: request parsing, error mapping, views and one router per resource."""
