"""Names of the export formats and of an export's marker file: constants only, so that the
command line can offer them without importing the exporters (gengap.harnesses.export)."""

FORMATS = ("chat", "verl", "lm-eval", "prm")
EXPORT_MARKER = "gengap-export.json"
VERL_VERSION = "0.9.1"  # the verl release whose main_ppo config these keys were checked against
