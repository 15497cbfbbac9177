"""Every sentence the viewer shows a person, in one place."""

from __future__ import annotations

TITLE = "wren watch"

# Conversation pane
ROLE_LABEL = {"user": "you", "assistant": "assistant", "tool": "tool result"}
STREAMING = "assistant · writing…"
THINKING_NOW = "assistant · thinking…"
THOUGHT = "(thought first: {more}, shown with the reply)"
THINKING = "thinking: "
THINKING_SEALED = "encrypted by the server (kept to send back, not shown)"
STREAM_CUT_OFF = "assistant · cut off: its writer is gone and no reply followed"
STREAM_BEFORE = "… {more} before this"
PARTIAL_REPLY = "partial reply, discarded (no reply followed it: a retry, a crash or a cancel)"
FOLDED = "… {more} · Enter to expand"
NOT_SHOWN = "… {more} not shown: too long to show here (search still finds them) · Enter to fold"
UNFOLD_HINT = "Enter to fold"
EMPTY_SESSION = "Nothing in this journal yet: waiting for the first event."
# A compaction: the divider where the model's summary replaced the messages before it (their events stay).
COMPACTED = "compacted {messages} messages, ~{before:,} tokens → ~{after:,}"
SUMMARY = "summary: "
# The fork picker's mark on the first point after a compaction (a fork from there on gets the summary).
AFTER_COMPACTION = "after the compaction at seq {seq} ·"
# Text Wren put into a message from files: shown as such, folded.
INSTRUCTIONS_LABEL = "project instructions (given by Wren)"
REFERENCES = "given with it: {refs}"
# The status line's context gauge: the last request's size against the model's window.
GAUGE = "context {used:,} / {window:,} ({percent:.0%})"

# Status line
LIVE, PAUSED, ENDED = "live", "paused", "ended"
# Another agent's session that nobody writes now, ending in a tool call with no result recorded.
STOPPED_MID_CALL = "stopped mid-call"
MOVED_MODE, DELETED_MODE = "moved", "deleted"
# A session read from a fleet's server whose machine is not heard from: it may go on, or have stopped.
SILENT_MODE = "silent"
# A Wren writer checks its journal before each event and stops (exit 5) when it left its path.
MOVED_TO_WRITING = "moved to {name}: its writer stops at its next event"
MOVED_WRITING = "moved: its writer stops at its next event"
MOVED_TO = "moved to {name}"
MOVED = "moved away from this name"
DELETED_WRITING = "deleted: its writer stops at its next event"
DELETED = "deleted: the file is gone; what it held is shown"
NEW_EVENTS = "{count} new · {key} to jump to live"
STOPPED_AT = "stopped at line {line}: {reason}"
TORN_WAITING = "the last line was cut short (no newline at its end)"
AGO = "{age} ago"
INDEXING = "indexing {percent}%…"
LOADING = "loading history {percent}%…"
SEARCHING = "searching {percent}%…"
READING = "reading…"
MATCH = "match {k} of {n}"
# Time spent waiting for the model and running tools, summed over the session.
SPENT = "model {model} · tools {tools}"
MATCHES = "{n} matches for {query}"
ONLY = "only {what}: {hidden} hidden ({key}: all)"

# Tool timings
TOOLS_TITLE = "Tool calls"
NO_TOOLS = "No tool calls yet."
TOOL_COLUMNS = ("tool", "arguments", "elapsed", "size", "state")

# Fork picker
FORK_TITLE = "Fork points of {session}"
FORK_HELP = "Enter: fork at the highlighted point · Esc: back"
PICK_HELP = "Enter: pick this point (printed as ID SEQ on exit) · Esc: back"
FORK_FILES_HELP = (
    "Enter: fork the conversation · f: fork it with its files, into a new folder · "
    "r: rewind this session here · Esc: back"
)
# The rewind key: the preview is `wren rewind ID SEQ` run as a child with no answer (it changes nothing).
READING_REWIND = "Reading what a rewind to seq {seq} would do…"
CONFIRM_REWIND = (
    "Rewind {session} to seq {seq}, in place?\n\n{preview}\n\n"
    "Its workspace gets its files as they were then, and its next turn continues from there. "
    "Nothing is erased: `wren rewind {session} --undo` puts it all back."
)
REWOUND = "Rewound {session} to seq {seq}.\n\n{said}\n\nUndo with:\n  {command}"
REWIND_FAILED = "Could not rewind: {reason}"
NO_FILES_TO_REWIND = "No snapshot holds the files at seq {seq}, so the session cannot be rewound there."
READING_SNAPSHOTS = "Reading the snapshots…"
# The lines a call changed (`b` on a write, edit or command row), read by `wren blame --call` as a child.
CALL_LINES_TITLE = "Lines {tool} changed (call {call}, seq {seq}) · Esc: back"
NOT_A_CALL_ROW = "Put the cursor on a write, edit or command row to see the lines it changed."
NO_CALL_SNAPSHOTS_FOREIGN = "{agent} sessions have no Wren snapshots, so the lines this call changed are not known."
NO_CALL_SNAPSHOTS_HERE = (
    "This session's snapshot store is not on this machine, so the lines this call changed are not known."
)
CALL_CHANGED_NOTHING = "The call changed no file (the snapshots before and after it hold the same files)."
CALL_LINES_UNREADABLE = "wren blame --call gave output the viewer cannot read."
CALL_BINARY = "binary, no lines"
CALL_MORE_LINES = "… {more} more lines (wren blame --call shows them all)"
CHANGED_SINCE = "{n} changed"
NO_DIFF = "No files to show for seq {seq}: {why}"
FILES_AS_NOW = "The files at seq {seq} are as in the last snapshot."
DIFF_CUT = "… {n} more lines (wren diff-files shows them all)"
NO_FILES_AT = "No snapshot holds the files at seq {seq}: a fork there restores the conversation only."
CONFIRM_FORK_FILES = (
    "Fork {session} at seq {seq} with its files?\n\n{point}\n\n"
    "The files as they were then are written to the folder below (a new or empty one: edit it to choose "
    "another), and the fork works there. This session and its workspace are left exactly as they are."
)
FOLDER_HELP = "Enter forks into this folder · Esc cancels · a relative name is taken from where wren watch started"
NO_FOLDER = "Name a folder for the fork's files."
FOLDER_UNUSABLE = "{folder}: {why}. Choose another."
FOLDER_USED = "{folder} is not a new or empty folder: a fork writes its files into a fresh one. Choose another."
FORKED_FILES = "Forked {parent} at seq {seq} → {new}; its files are in {target}\n\nContinue it there with:\n  {command}"
NO_FORK_POINTS = "No clean fork point yet: a point is after a user message, or a reply with no tool call open."
CONFIRM_FORK = (
    "Fork {session} at seq {seq}?\n\n{point}\n\n"
    "A new journal is written in {folder}; this one is left exactly as it is."
)
# {command}: `wren resume NEW`, with --dir when the fork's folder is not where wren looks from here.
FORKED = "Forked {parent} at seq {seq} → {new}\n\nContinue it with:\n  {command}"
FORK_FAILED = "Could not fork: {reason}"
CANNOT_WRITE = "cannot write the new journal in {folder} ({why}); this journal is left as it is"
NOT_FORKABLE = "Only a Wren journal can be forked: this session comes from elsewhere."
FINDING_POINTS = "Reading the whole session for its fork points…"
# {agent}'s session forked into a new Wren journal: the file it came from is left as it was.
FORKED_FOREIGN = (
    "Forked {agent} session {parent} at line {seq} → {new}\n\nIts file was only read. Continue it with:\n  {command}"
)
# {why}: why the session's folder is not carried (a relative path, or /).
FORK_NO_WORKSPACE = (
    "{why}, so the fork records no workspace: `wren resume` works in the folder it is typed in (it says so "
    "first), or in the one --workspace DIR names."
)
CONFIRM_FORK_FOREIGN = (
    "Fork this {agent} session at line {seq} into a new Wren journal?\n\n{point}\n\n"
    "The journal goes to {folder}; the session's file is left exactly as it is."
)
STILL_INDEXING = "Fork points need the whole journal: still indexing it, try again in a moment."

# Raw view, search, help
RAW_TITLE = "Event {seq} ({type}) as written"
RAW_TITLE_PARTIAL = "Events {first}–{last} (delta: a partial reply) as written"
RAW_TITLE_FOREIGN = "Line {seq} as {agent} wrote it (shown as {type})"
RAW_WHERE = "The bytes at {start}–{end} of the journal ({size} bytes), the newline that ends each line not shown:"
RAW_MORE = "… {more} more bytes not shown"
RAW_PRETTY = "Pretty-printed (every member, in the order written):"
RAW_NO_PRETTY = "(too long to pretty-print here)"
RAW_NOT_JSON = "(not JSON)"
NO_EVENT = "No event selected."
SEARCH_PLACEHOLDER = "search the conversation (Enter: find, then n / N: next / previous match; Esc: close)"
NOT_FOUND = "No match for {query!r}."
NO_MORE = "No more {what}."

# Browser
BROWSER_TITLE = "Journals in {folder}"
NO_JOURNALS = "No journals in {folder} yet. Start one with `wren run TASK` or `wren demo`; it appears here."
BROWSER_COLUMNS = ("id", "started", "events", "duration", "tokens", "state", "forked from", "project")
AGENT_TITLE = "Sessions of {agents}"
# Several agents: their names alone in the title (their folders would not fit); a key shows the folders.
AGENTS_TITLE = "Sessions of {count} agents ({key}: their folders): {agents}"
AGENT_FOLDERS = "The folders read (f: hide):"
ANY_AGENT = "any agent, each recognised by its content"
NO_AGENT_SESSIONS = "No sessions of {agents} yet; they appear here as they are created."
# Another agent's session counts its file's lines: each is one of its records (Wren's events are translated from them).
AGENT_COLUMNS = ("agent", "id", "started", "lines", "duration", "tokens", "state", "project")

# The fleet's browser (wren watch nats://SERVER)
FLEET_TITLE = "Sessions on {server}"
FLEET_COLUMNS = ("host", "id", "started", "events", "tokens", "last event", "state", "forked from")
FLEET_EMPTY = "No sessions on {server} yet. Run `wren mirror --url {server}` on a machine: its sessions appear here."
FLEET_CANNOT_LIST = "Cannot list the sessions on {server}: {why}. Trying again…"
# A live session whose machine's mirror has not been heard from lately: its row may be old.
FLEET_SILENT = "live? mirror silent"
# Search across sessions (the browser's / and its results)
SEARCH_ALL_PLACEHOLDER = "search every session listed (Enter: search; a capital letter matches case; Esc: close)"
RESULTS_TITLE = "Matches for {query}, newest session first (Enter: open at the match · Esc: back)"
RESULTS_SEARCHING = "searching… {done} of {total} sessions, {found} matches"
RESULTS_DONE = "{found} matches in {total} sessions"
RESULTS_NONE = "no match in {total} sessions"
RESULTS_CAPPED = "the first {shown} listed"
RESULTS_STOPPED = "{count} read only in part"
RESULTS_STOP = "{session}: reading stops at line {line}: {why}; nothing after it was searched"
RESULTS_UNREADABLE = "{why}; not searched"

# Command line
PICKED_NOTHING = "no fork point picked"

# Waterfall (the tools pane on the session's time axis) and tokens per turn
WATERFALL_TITLE = "Tool calls on the session's time axis · tokens per turn above · w: the table"
WATERFALL_NAME = "tool"
WATERFALL_LABEL = "elapsed"
WATERFALL_AXIS = "(no time axis yet)"

# Lineage
LINEAGE_TITLE = "Lineage of {session}"
LINEAGE_HELP = "Ancestors above, forks below · Enter: open it · Esc: back"
READING_LINEAGE = "reading the lineage…"
LINEAGE_UP = "↑{n} "
LINEAGE_HERE = "▶ "
LINEAGE_AT = "  forked at seq {seq}"
LINEAGE_MISSING = "  missing (its journal is not in the folders looked in)"
NO_LINEAGE = "Lineage needs a Wren journal: this session comes from elsewhere."

# A fork beside its parent
SIDE_BY_SIDE_TITLE = "{session} beside its parent"
DIFFERS = "differs here: {what}"
NOT_A_FORK = "{session} is not a fork: it has no fork event, so no parent to compare it with."
PARENT_MISSING = "The parent, {parent}, is not in {folders}: it was moved or deleted."

# Replay
REPLAY_TITLE = "replay of {session}"
REPLAY_PLAYING = "▶ {speed}x"
REPLAY_PAUSED = "❚❚ paused"
REPLAY_WHERE = "event {event} of {events} · turn {turn} of {turns} · call {call} of {calls}"
REPLAY_GAP = "a quiet {gap} crossed quickly"
REPLAY_LIVE = "Replay is for a finished session: this one is still being written (its live view is here)."
REPLAY_INDEXING = "Replay needs the whole journal: still indexing it, try again in a moment."
REPLAY_EMPTY = "Nothing to replay yet."

# Export
EXPORT_TITLE = "Export {session}"
EXPORT_HELP = "m / h / j: the format · Enter: write it (whole, or not at all) · Esc: back"
EXPORT_HELP_WEB = "m / h / j: the format · Enter: download it · Esc: back"
EXPORTING = "exporting…"
EXPORTED = "Exported to {path}."
EXPORTED_DAMAGED = "The journal could not be read to its end; the export says where reading stopped."
EXPORT_FAILED = "Could not export: {reason}"
NO_EXPORT = "Only a Wren journal can be exported: this session comes from elsewhere."
NOT_IN_BROWSER = "In a browser the viewer only reads: fork from a terminal."

# Browser: the fork tree
TREE_MISSING = " (missing)"
FOLD_FORKS = "Fold forks"
