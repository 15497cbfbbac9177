"""Wren's own store of other agents' sessions: `wren keep` copies them there, so an agent's deletion loses nothing.

`store` is the layout and what reads it (the read API: `kept_root`, `kept_folder`, `kept_files`, `kept_versions`);
`keeping` copies the agents' files into it, `verifying` checks every checksum, `following` keeps it as the agents
write. This layer imports only `wren_tui.journal`, `wren_tui.foreign` and `wren_tui.portable`; it never writes in
an agent's folder.
"""
