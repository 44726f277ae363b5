# -*- coding: utf-8 -*-
# Copyright: hyperpod.tenancy contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)

"""The fixed-width text tables the playbooks print: the team summary, the chargeback, the capacity report."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type


def columns(rows, left=None):
    """Fixed-width lines of ``rows`` (sequences of text): the columns ``left`` (indexes) aligned left, every column when
    None, the others (amounts) right; a row that is None is a rule of dashes under the one before."""
    cells = [row for row in rows if row is not None]
    widths = [max(len(row[index]) for row in cells) for index in range(len(cells[0]))]

    def line(row):
        if row is None:
            return "  ".join("-" * width for width in widths)
        return "  ".join(cell.ljust(width) if left is None or index in left else cell.rjust(width)
                         for index, (cell, width) in enumerate(zip(row, widths))).rstrip()

    return [line(row) for row in rows]
