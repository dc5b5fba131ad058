"""The commands: what ``gengap`` runs (the parser, each command's arguments and its run).

The top layer (docs/architecture.md): a command may import the releases, the ground and the
packages (generators, splits, baselines, harnesses, data_cards); nothing below imports a command.
Kept empty: importing ``gengap.commands.entry`` must stay cheap (it guards Ctrl-C at start-up).
"""
