"""Adapters that present other libraries' HTTP objects to openapi-core, laid out like
``openapi_core.contrib`` (one module per library)."""
