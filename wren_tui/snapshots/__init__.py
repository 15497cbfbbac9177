"""The workspace's files through a session's history: the snapshot store and what reads it.

A snapshot is the workspace's files as a git tree in a store of Wren's own beside the journals
(`store`: taking, reading, restoring, pruning; `budget`: which snapshots a prune keeps), named by a
`snapshot` event of the journal. What reads the store: a fork with its files (`forking`), a rewind in
place (`rewinding`) and `wren blame` (`blame`, whose line diff is `linediff`, in C where built).

It imports the journal's events and targets and its fork (a fork with files is a fork first), and
nothing above the journal: the agent, the commands and the viewer's child import it.
"""
