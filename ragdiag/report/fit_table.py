"""A rich table that fits the console without splitting a number or a name: cells wrap at spaces
only, and a table too wide for that is folded into several tables of the same rows, each
repeating the key columns (``Fitted(table, keys=2)``). What logs and pipes get (80 columns) stays
readable; a wide terminal gets the table unchanged."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rich.cells import cell_len
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:
    from rich.console import Console, ConsoleOptions, RenderResult


def _plain(console: Console, cell: Any) -> str:
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return console.render_str(cell).plain
    return ""  # another renderable: measured by rich itself


def _widths(console: Console, texts: Iterable[str]) -> tuple[int, int]:
    """(longest word, longest line) over some cell texts."""
    word = line = 1
    for text in texts:
        for row in text.splitlines() or [""]:
            line = max(line, cell_len(row))
            word = max([word, *(cell_len(w) for w in row.split())])
    return word, line


def _overhead(table: Table, n: int) -> int:
    """Columns of border and padding around ``n`` cells."""
    left, right = table.padding[3], table.padding[1]
    pads = n * (left + right) - (0 if table.pad_edge else left + right)
    rules = (n - 1 if table.box else 0) + (2 if table.box and table.show_edge else 0)
    return pads + rules


def column_groups(mins: Sequence[int], overhead: Any, width: int, keys: int) -> list[list[int]]:
    """Column indices per table: the ``keys`` first columns in each, the others in order, as many
    per table as fit ``width`` at their minimum widths (at least one)."""
    key_cols = list(range(min(keys, len(mins))))
    groups: list[list[int]] = []
    current = list(key_cols)
    for i in range(len(key_cols), len(mins)):
        trial = [*current, i]
        if len(current) > len(key_cols) and sum(mins[j] for j in trial) + overhead(len(trial)) > width:
            groups.append(current)
            current = [*key_cols, i]
        else:
            current = trial
    groups.append(current)
    return groups


def share_width(mins: Sequence[int], naturals: Sequence[int], room: int) -> list[int]:
    """Column widths within ``room``: each column its natural width when all fit, else its minimum
    plus a share of the room left proportional to what it would still use."""
    if sum(naturals) <= room:
        return list(naturals)
    widths = list(mins)
    spare = room - sum(mins)
    wants = [n - m for n, m in zip(naturals, mins)]
    total = sum(wants)
    if spare > 0 and total > 0:
        for i, want in enumerate(wants):
            widths[i] += min(want, spare * want // total)
        left = room - sum(widths)  # what rounding down left: one column each, widest wish first
        for i in sorted(range(len(widths)), key=lambda j: mins[j] - naturals[j]):
            if left > 0 and widths[i] < naturals[i]:
                widths[i] += 1
                left -= 1
    return widths


class Fitted:
    """Render ``table`` at the console's width, folded into several tables if it must be."""

    def __init__(self, table: Table, keys: int = 1) -> None:
        self.table, self.keys = table, keys

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield from self.tables(console, options.max_width)

    def tables(self, console: Console, width: int) -> Iterator[Table]:
        table = self.table
        columns = table.columns
        cells = [[_plain(console, c) for c in col.cells] for col in columns]
        measured = [_widths(console, [_plain(console, col.header) if table.show_header else "", *col_cells])
                    for col, col_cells in zip(columns, cells)]
        mins = [max(word, col.min_width or 0) for (word, _), col in zip(measured, columns)]
        naturals = [max(line, m) for (_, line), m in zip(measured, mins)]
        groups = column_groups(mins, lambda n: _overhead(table, n), width, self.keys)
        rows = [list(col.cells) for col in columns]
        for number, group in enumerate(groups):
            widths = share_width([mins[i] for i in group], [naturals[i] for i in group],
                                 width - _overhead(table, len(group)))
            yield self._part(group, widths, rows, number, len(groups))

    def _part(self, group: list[int], widths: list[int], rows: list[list[Any]], number: int, parts: int) -> Table:
        table = self.table
        title = table.title
        if parts > 1 and number > 0:
            title = f"{title} (continued)" if isinstance(title, str) and title else "(continued)"
        part = Table(title=title, caption=table.caption if number == parts - 1 else None, box=table.box,
                     show_header=table.show_header, show_lines=table.show_lines, show_edge=table.show_edge,
                     header_style=table.header_style, title_justify=table.title_justify,
                     title_style=table.title_style, caption_justify=table.caption_justify, padding=table.padding,
                     pad_edge=table.pad_edge, row_styles=table.row_styles, style=table.style,
                     border_style=table.border_style, leading=table.leading, highlight=table.highlight)
        for i, width in zip(group, widths):
            col = table.columns[i]
            part.add_column(col.header, justify=col.justify, style=col.style, header_style=col.header_style,
                            vertical=col.vertical, overflow="fold", width=width)
        for r, row in enumerate(table.rows):
            part.add_row(*(rows[i][r] for i in group), style=row.style, end_section=row.end_section)
        return part


def fitted(item: Any, keys: int = 1) -> Any:
    """``item`` folded to the console's width when it is a table; anything else as it is."""
    return Fitted(item, keys) if isinstance(item, Table) else item
