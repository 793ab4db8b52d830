"""The pane tabs: Textual's TabbedContent, except that a focus that has already moved on does
not pull its tab back into view.

A TabPane tells its TabbedContent "something in me was focused" with a message, which
arrives later. When a pane being built takes the focus and the user's next key (`6` then `5`)
shows another pane before that message is handled, TabbedContent would make the first pane's
tab active again: the user ends on Settings, having asked for Review (issue 23, item 6; seen
4 times in 4 under a busy CPU, tests/keys_under_load.py). Here the message only activates its
tab while the focus is still inside it."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane


class PaneTabs(TabbedContent):
    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        focused = self.app.focused
        if focused is None or event.tab_pane not in focused.ancestors_with_self:
            event.stop()
            event.prevent_default()  # TabbedContent's own handler would activate the tab
