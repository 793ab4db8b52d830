"""The Raw memories pane's widgets: the table that keeps its place, one raw memory's view."""
