"""The pane tabs: Textual's TabbedContent, except that a focus never pulls a tab into view.

A TabPane tells its TabbedContent "something in me was focused", and TabbedContent makes that
pane's tab active. In memdeck only a pane key (or a click on a tab) changes the pane, and
Textual's `focus()` lands later than it is asked for: when the pane being built asks for the
focus and the user's next key (`6` then `5`) shows another pane before it lands, the focus
arrives inside the pane just left, and TabbedContent would show it again: the user ends on
Settings, having asked for Review (issue 23, item 6; 4 times in 4 under a busy CPU, then 2 in
250 while the check was "is the focus still in it", tests/keys_under_load.py). Here the tab
stays, and a focus that landed in a hidden pane is handed back to the pane on screen, so no
key goes to a widget nobody sees.

The same for a tab strip's message that arrives after the tabs moved on: the strip posts
"tab X activated" when its active tab changes (also once when it is mounted), and a message
still queued when a pane key shows another pane would bring X back. One that names a tab other
than the strip's active one is stale and dropped (a click makes its tab active before it
posts, so a click always names the active tab)."""

from __future__ import annotations

from textual.widgets import TabbedContent, TabPane, Tabs
from textual.widgets._tabbed_content import ContentTabs


class PaneTabs(TabbedContent):
    def _on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        if isinstance(event.tabs, ContentTabs) and event.tabs.tabbed_content is self \
                and event.tab.id != event.tabs.active:
            event.stop()
            event.prevent_default()  # TabbedContent's own handler would show that tab

    def _on_tab_pane_focused(self, event: TabPane.Focused) -> None:
        event.stop()
        event.prevent_default()  # TabbedContent's own handler would activate the tab
        if event.tab_pane.id != self.active:
            self.call_later(self._focus_the_shown_pane)

    def _focus_the_shown_pane(self) -> None:
        focused = self.app.focused
        shown = self.active_pane
        if shown is None or (focused is not None and shown in focused.ancestors_with_self):
            return
        pane = getattr(self.app, "built", lambda _pid: None)(self.active)
        if pane is not None:
            pane.focus_default()
        else:  # still being built: it takes the focus itself once it is
            self.screen.set_focus(None)
