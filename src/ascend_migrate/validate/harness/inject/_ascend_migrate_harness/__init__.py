"""Harness injected at interpreter start-up (through `sitecustomize`) into a project's own
training command: counts optimizer steps, records the loss of every backward, stops cleanly
after N steps, and tells which edited lines ran.

Standard library only, Python 3.9 and later, and it never imports torch itself: the patches go
in once the program's own `import torch` has finished. Importing this package only defines the
names below; `boot.start()` switches the harness on.
"""

# Environment variables the parent sets (ascend_migrate.validate.harness.harness_env).
ENV_DIR = "ASCEND_MIGRATE_HARNESS_DIR"  # the switch: the folder records are written to
ENV_STEPS = "ASCEND_MIGRATE_HARNESS_STEPS"  # stop after this many counted steps (0: never)
ENV_SEED = "ASCEND_MIGRATE_HARNESS_SEED"  # seed applied when torch has been imported
ENV_THREADS = "ASCEND_MIGRATE_HARNESS_THREADS"  # torch.set_num_threads at the same moment
ENV_SITES = "ASCEND_MIGRATE_HARNESS_SITES"  # JSON file naming the edit sites to probe
ENV_OPS = "ASCEND_MIGRATE_HARNESS_OPS"  # record the operators reaching the npu (operators.py)
ENV_OPS_SECONDS = "ASCEND_MIGRATE_HARNESS_OPS_SECONDS"  # ... and stop after this many seconds
ENV_OPS_MODE = "ASCEND_MIGRATE_HARNESS_OPS_MODE"  # "record": the program imports the npu itself

# Set by the harness itself around its one re-launch of a probed `__main__` script.
ENV_RELAUNCHED = "ASCEND_MIGRATE_HARNESS_RELAUNCHED"
ENV_ORIG_ARGV = "ASCEND_MIGRATE_HARNESS_ORIG_ARGV"

# Exit status of a process the harness stopped after its last counted step (not under torchrun
# and not in a multiprocessing child: those exit 0 and say "stopped" in their record).
STOP_EXIT_CODE = 86

SCHEMA = "ascend-migrate/harness-record/1"
RECORD_PREFIX = "rank-"  # rank-<RANK>-<pid>.json
PROGRESS_PREFIX = "progress-"  # progress-<pid>.txt: "<steps> <skipped> <unix time> <rank>"
OPS_PREFIX = "ops-"  # ops-<pid>.json: the operators a process sent to the npu
SITES_FILE = "sites.json"  # {"files": {absolute path: [line, ...]}}

# The probe inserted before each edit-site statement: a builtin, so it needs no import.
PROBE_NAME = "__ascend_migrate_probe__"
