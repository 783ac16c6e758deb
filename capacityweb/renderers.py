"""CSV for report endpoints (``?format=csv`` or ``Accept: text/csv``).

A report response is ``{"rows": [...], ...}``; the CSV is its rows, one line
each, under the columns the view declares in ``csv_columns`` — a stable
header that does not depend on which rows happen to be present (an empty
report still has its header). Anything else (an error body, say) is written
as ``field,message`` lines so a CSV client still reads why it failed.
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
                writer.writerow([field, message])
        else:
            columns = list(getattr(view, "csv_columns", ()) or _columns_of(data["rows"]))
            writer.writerow(columns)
            for row in data["rows"]:
                writer.writerow([_cell(row.get(column)) for column in columns])
        if response is not None:
            response["Content-Disposition"] = f'attachment; filename="{_filename(view)}.csv"'
        return output.getvalue().encode(self.charset)


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
