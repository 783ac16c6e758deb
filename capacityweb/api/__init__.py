"""The REST API's shared plumbing (``/api/v1/``): the router every app registers its
viewsets on (``urls``), authentication, permissions, throttles, parsers, renderers,
error bodies (``errors``), the OpenAPI schema's error responses (``schema_errors``)
and the schema/docs views (``docs``). Each app's own viewsets live in its ``api.py``.
"""
