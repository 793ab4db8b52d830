"""Widgets and modal screens shared by the panes, one per module."""
