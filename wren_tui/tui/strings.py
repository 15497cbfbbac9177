"""Every sentence the viewer shows a person, in one place."""

from __future__ import annotations

TITLE = "wren watch"

# Conversation pane
ROLE_LABEL = {"user": "you", "assistant": "assistant", "tool": "tool result"}
STREAMING = "assistant · writing…"
FOLDED = "… {hidden} more lines · Enter to expand"
UNFOLD_HINT = "Enter to fold"
EMPTY_SESSION = "Nothing in this journal yet: waiting for the first event."

# Status line
LIVE, PAUSED, ENDED = "live", "paused", "ended"
NEW_EVENTS = "{count} new · {key} to jump to live"
STOPPED_AT = "stopped at line {line}: {reason}"
TORN_WAITING = "the last line was cut short (no newline at its end)"
AGO = "{age} ago"
INDEXING = "indexing {percent}%…"
SEARCHING = "searching {percent}%…"

# Tool timings
TOOLS_TITLE = "Tool calls"
NO_TOOLS = "No tool calls yet."
TOOL_COLUMNS = ("tool", "arguments", "elapsed", "size", "state")

# Fork picker
FORK_TITLE = "Fork points of {session}"
FORK_HELP = "Enter: fork at the highlighted point · Esc: back"
PICK_HELP = "Enter: pick this point (printed as ID SEQ on exit) · Esc: back"
NO_FORK_POINTS = "No clean fork point yet: a point is after a user message, or a reply with no tool call open."
CONFIRM_FORK = "Fork {session} at seq {seq}?\n\n{point}\n\nA new journal is written; this one is left exactly as it is."
FORKED = "Forked {parent} at seq {seq} → {new}\n\nContinue it with:\n  wren resume {new}"
FORK_FAILED = "Could not fork: {reason}"
CANNOT_WRITE = "cannot write the new journal in {folder} ({why}); this journal is left as it is"
STILL_INDEXING = "Fork points need the whole journal: still indexing it, try again in a moment."

# Raw view, search, help
RAW_TITLE = "Event {seq} ({type}) as written"
NO_EVENT = "No event selected."
SEARCH_PLACEHOLDER = "search the conversation (Enter: next match, Esc: close)"
NOT_FOUND = "No match for {query!r}."
NO_MORE = "No more {what}."

# Browser
BROWSER_TITLE = "Journals in {folder}"
NO_JOURNALS = "No journals in {folder} yet. Start one with `wren run TASK` or `wren demo`; it appears here."
BROWSER_COLUMNS = ("id", "started", "events", "duration", "tokens", "state", "forked from")

# Command line
PICKED_NOTHING = "no fork point picked"
