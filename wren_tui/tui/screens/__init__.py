"""The viewer's screens: the journal browser, a session, and the modal dialogs."""
