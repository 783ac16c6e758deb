"""CSV for report endpoints (``?format=csv`` or ``Accept: text/csv``).

A report response is ``{"rows": [...], ...}``; the CSV is its rows, one line
each, under the columns the view declares in ``csv_columns`` — a stable
header that does not depend on which rows happen to be present (an empty
report still has its header). Anything else (an error body, say) is written
as ``field,message`` lines so a CSV client still reads why it failed.

Every cell goes through ``spreadsheet_safe`` (OWASP "CSV Injection"): text that a
spreadsheet would run as a formula, starting ``=``, ``+``, ``-``, ``@``, a tab or a
carriage return, gets a leading ``'``. Cluster names, GPU-model labels and team names
come from the clusters and their users, so a name like ``=HYPERLINK(...)`` is data,
never a formula. Numbers are written as numbers (a negative saving stays ``-12.5``).
"""

import csv
import io
from collections.abc import Mapping, Sequence
from typing import Any

from rest_framework.renderers import BaseRenderer


class CSVRenderer(BaseRenderer):
    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        renderer_context = renderer_context or {}
        view = renderer_context.get("view")
        response = renderer_context.get("response")
        output = io.StringIO()
        writer = csv.writer(output, lineterminator="\r\n")
        failed = response is not None and response.status_code >= 400
        if failed or not _has_rows(data):
            writer.writerow(["field", "message"])
            for field, message in _error_lines(data):
                writer.writerow([spreadsheet_safe(field), spreadsheet_safe(message)])
        else:
            columns = list(getattr(view, "csv_columns", ()) or _columns_of(data["rows"]))
            writer.writerow([spreadsheet_safe(column) for column in columns])
            for row in data["rows"]:
                writer.writerow([spreadsheet_safe(_cell(row.get(column))) for column in columns])
        if response is not None:
            response["Content-Disposition"] = f'attachment; filename="{_filename(view)}.csv"'
        return output.getvalue().encode(self.charset)


FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: Any) -> Any:
    """``value`` as a CSV cell no spreadsheet runs: text starting with a formula
    character gets a leading ``'`` (OWASP CSV Injection); numbers stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def _has_rows(data: Any) -> bool:
    return isinstance(data, Mapping) and isinstance(data.get("rows"), Sequence)


def _columns_of(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    return list(rows[0].keys()) if rows else []


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, list | tuple):
        return ";".join(str(item) for item in value)
    return value


def _error_lines(data: Any) -> list[tuple[str, str]]:
    if isinstance(data, Mapping):
        lines = []
        for field, messages in data.items():
            if isinstance(messages, list | tuple):
                lines.extend((str(field), str(message)) for message in messages)
            else:
                lines.append((str(field), str(messages)))
        return lines
    return [("", str(data))]


def _filename(view: Any) -> str:
    return str(getattr(view, "csv_filename", "report"))
