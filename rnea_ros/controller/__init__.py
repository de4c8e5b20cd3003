"""The command laws of ``effort_commands``, without ROS (numpy and the dynamics room only).

One small class per law behind one interface (``law.CommandLaw``), listed once in ``laws.LAWS``,
whose names are ``command_source``'s choices: docs/development.md, "Adding a command law".
"""
