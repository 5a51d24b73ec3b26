"""The wall: the page of columns side by side, its live view, editor and search (issue 11).

The columns, sources, items and the scheduler are app.streams'; this package is
only how people see and edit them.
"""
