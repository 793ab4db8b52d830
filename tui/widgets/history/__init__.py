"""The History pane's widgets: the list of the memory folder's commits."""
