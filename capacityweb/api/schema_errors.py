"""The error responses of every API operation, added to the OpenAPI schema (a
drf-spectacular postprocessing hook), so clients and schema-driven fuzzers know them.

drf-spectacular documents only each view's success response. What the API also
answers, and when (docs/API.md, "Errors"):

    400  a request body, or a query parameter that can be invalid (a filter, a
         time, a choice): field → messages, or {"detail"} for unreadable JSON
    403  not signed in (session or token), or not allowed (operators' writes);
         DRF answers 403, not 401, since its first authenticator (the session)
         sends no WWW-Authenticate challenge
    404  an id in the path, or a ``cluster``/``evaluation`` parameter, naming no
         row (or one the caller may not see); a ``page`` past the last
    415  a body in a media type the operation does not list (DRF's parsers)
    429  a throttled request: every write (scope ``writes``, ``test-sends``) and
         the reports (``reports``), with Retry-After

An optional query parameter given empty (``?cluster=``) is read as not given, as
django-filter does (``Filter.filter`` returns the queryset for a value in
``EMPTY_VALUES``), DRF does for ``page`` and ``format``, and the views do for theirs:
``allowEmptyValue``. Not ``page_size``: an empty one is the 400 of any value that is not
a whole number from 1 to 500 (``capacityweb.api.urls.StandardPagination``).

An operation answering in several formats (JSON and CSV: a ``format`` query parameter)
answers every status, errors included, in the format asked for: DRF negotiates the
renderer before the view runs, and renders its refusals with it (a CSV client reads
``field,message`` lines). So each of its responses lists every format's media type, and
its ``format`` parameter says what DRF takes (``rest_framework.negotiation``
``DefaultContentNegotiation.select_renderer``): the browsable API's ``api`` as well
(HTML, a page for people; drf-spectacular leaves it out), and any other value a 404.

The rules read the operation as the schema states it (method, path and query
parameters, body, security), so a new operation is covered as soon as it exists.
"""

from __future__ import annotations

from typing import Any

from rest_framework.renderers import BrowsableAPIRenderer
from rest_framework.settings import api_settings

ERROR_SCHEMA = {
    "type": "object",
    "properties": {"detail": {"type": "string"}},
    "required": ["detail"],
}
VALIDATION_SCHEMA = {
    "type": "object",
    "description": "Each refused field → its messages, or ``detail`` for an unreadable body",
    "additionalProperties": {},
}
UNSAFE_METHODS = {"post", "put", "patch", "delete"}
HTTP_METHODS = {"get", *UNSAFE_METHODS}
PARAMETERS_WITHOUT_400 = {"page", "ordering", "format"}
PAGE_SIZE_SCHEMA = {"type": "integer", "minimum": 1, "maximum": 500}  # StandardPagination
OBJECT_PARAMETERS = {"cluster", "evaluation", "page"}
# the reports validate their parameters themselves (FilterSet in ReportView.get)
REPORT_PREFIX = "/api/v1/reports/"
DESCRIPTIONS = {
    "400": "Invalid request: each refused field with its messages",
    "403": "Not signed in, or not allowed",
    "404": "No such object (or not visible to the caller)",
    "415": "A body in a media type the operation does not take",
    "429": "Throttled; Retry-After says when to try again",
}
FORMAT_PARAMETER = "format"  # DRF's URL_FORMAT_OVERRIDE
TEXT_SCHEMA = {"type": "string"}


def error_codes(path: str, method: str, operation: dict[str, Any]) -> list[str]:
    """The error statuses ``operation`` can answer (module docstring)."""
    query = {p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"}
    codes = []
    report = path.startswith(REPORT_PREFIX)
    if "requestBody" in operation or query - PARAMETERS_WITHOUT_400 or report:
        codes.append("400")
    if any(requirement for requirement in operation.get("security", [])):
        codes.append("403")
    if "{" in path or query & (OBJECT_PARAMETERS | {FORMAT_PARAMETER}) or report:
        codes.append("404")
    if "requestBody" in operation:
        codes.append("415")
    if method in UNSAFE_METHODS or report:
        codes.append("429")
    return codes


def error_response(code: str) -> dict[str, Any]:
    name = "ValidationErrors" if code == "400" else "ErrorDetail"
    return {
        "description": DESCRIPTIONS[code],
        "content": {"application/json": {"schema": {"$ref": f"#/components/schemas/{name}"}}},
    }


def add_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool):
    """POSTPROCESSING_HOOKS entry: document each operation's error responses."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("ErrorDetail", ERROR_SCHEMA)
    schemas.setdefault("ValidationErrors", VALIDATION_SCHEMA)
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            if method not in HTTP_METHODS:
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query" and parameter["name"] == "page_size":
                    parameter["schema"] = dict(PAGE_SIZE_SCHEMA)
                elif parameter.get("in") == "query" and not parameter.get("required"):
                    parameter["allowEmptyValue"] = True  # module docstring
            responses = operation.setdefault("responses", {})
            for code in error_codes(path, method, operation):
                responses.setdefault(code, error_response(code))
            document_formats(operation)
    return result


def browsable_formats() -> dict[str, str]:
    """format -> media type of the default renderers drf-spectacular leaves out (the
    browsable API's ``api``, text/html), which every view with them also serves."""
    renderers = (renderer() for renderer in api_settings.DEFAULT_RENDERER_CLASSES)
    return {
        renderer.format: renderer.media_type
        for renderer in renderers
        if isinstance(renderer, BrowsableAPIRenderer)
    }


def document_formats(operation: dict[str, Any]) -> None:
    """An operation with a ``format`` parameter: the browsable API's format in its enum, and
    each response in every format's media type (module docstring)."""
    parameter = next(
        (
            p
            for p in operation.get("parameters", [])
            if p.get("in") == "query" and p["name"] == FORMAT_PARAMETER
        ),
        None,
    )
    if parameter is None:
        return
    extra = browsable_formats()
    enum = parameter["schema"].setdefault("enum", [])
    enum[:] = sorted({*enum, *extra})
    media_types = {
        media
        for response in operation["responses"].values()
        for media in response.get("content", {})
    }
    media_types |= set(extra.values())
    for response in operation["responses"].values():
        content = response.setdefault("content", {})
        for media_type in sorted(media_types - set(content)):
            content[media_type] = {"schema": dict(TEXT_SCHEMA)}
