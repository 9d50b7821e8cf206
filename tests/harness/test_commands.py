"""The command projects run unchanged under the harness: steps, losses equal to the project's own
figures, the stop, parameter checksums, edit sites, and the processes that must stay quiet.

Every project writes the losses it computes itself to FIXTURE_LOSSES; each command runs once per
module (a torch import costs seconds) and several tests read its result; a module's
independent commands run two at a time (`run_together`)."""
from __future__ import annotations

import math
import sys

import pytest

from ascend_migrate.validate.harness import STOP_EXIT_CODE, progress
from harness_runs import copy_project, run_command, run_together, torchrun_command

pytestmark = pytest.mark.needs_torch
PY = sys.executable


def _flat(record):
    return [value for step in record["losses"] for value in step]


def _one(run):
    assert len(run.records) == 1, run.explain()
    return run.records[0]


# ------------------------------------------------------------------------------ import-time script

@pytest.fixture(scope="module")
def import_time(module_tmp):
    project = copy_project("import_time", module_tmp)
    sites = {str(project / "train.py"): [1, 20, 21, 27, 30, 35, 36],
             str(project / "tools.py"): [7, 10, 15, 16]}
    def go(i):
        return lambda: run_command([PY, "train.py", "--epochs", "3"], project, module_tmp / f"run{i}",
                                   steps=5, sites=sites)

    runs = run_together({i: go(i) for i in (1, 2)})
    return project, [runs[1], runs[2]]


def test_script_stops_after_n_steps_with_its_own_losses(import_time):
    _project, (run, _again) = import_time
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE, run.explain()
    assert (record["status"], record["exit"], record["steps"]) == ("stopped", {"code": 86}, 5)
    assert record["losses"] == [[v] for v in run.own_losses()[:5]]
    assert len(run.own_losses()) == 5  # step 5's own log line ran; step 6 did not
    assert "epoch 0 step 5 loss" in run.stdout and "step 6" not in run.stdout
    assert record["loss_source"] == "backward" and record["optimizer"] == "torch.optim.sgd.SGD"
    assert (record["seed"], record["threads"], record["device"]) == (0, 1, "cpu")
    assert record["argv"] == ["train.py", "--epochs", "3"]
    assert len(record["step_times"]) == 5 and all(t >= 0 for t in record["step_times"])
    steps, when = progress(run.out / "records")
    assert steps == 5 and when > 0 and run.records.problems == []


def test_parameter_checksum_matches_the_script_and_is_stable(import_time):
    _project, (run, again) = import_time
    first, second = _one(run), _one(again)
    assert first["params"]["sum"] == run.own[""][4]["param_sum"]
    assert first["params"]["count"] == 4 and first["params"]["numel"] == 8 * 16 + 16 + 16 * 2 + 2
    assert first["params"]["digest"] == second["params"]["digest"]
    assert first["losses"] == second["losses"]


def test_script_form_records_edit_sites(import_time):
    project, (run, _again) = import_time
    sites = _one(run)["sites"]
    train, tools = str(project / "train.py"), str(project / "tools.py")
    assert sites[train] == {1: "ran", 20: "unprobeable", 21: "ran", 27: "ran", 30: "ran",
                            35: "not-run", 36: "not-run"}
    assert sites[tools] == {7: "ran", 10: "ran", 15: "not-run", 16: "not-run"}
    details = _one(run)["site_details"]
    assert details[train][20] == {"reason": "blank line"}


@pytest.fixture(scope="module")
def ends_by_itself(module_tmp):
    project = copy_project("import_time", module_tmp / "short-copy")
    return run_command([PY, "train.py", "--epochs", "1"], project, module_tmp / "short",
                       steps=50)


def test_a_program_that_ends_first_is_finished(ends_by_itself):
    run = ends_by_itself
    record = _one(run)
    assert run.returncode == 0, run.explain()
    assert (record["status"], record["exit"], record["steps"]) == ("finished", None, 8)
    assert _flat(record) == run.own_losses()
    assert record["params"]["sum"] == run.own[""][-1]["param_sum"]
    assert "done" in run.stdout


# ----------------------------------------------------------------------------------- python -m pkg

@pytest.fixture(scope="module")
def package_run(module_tmp):
    project = copy_project("package_module", module_tmp)
    sites = {str(project / "trainer" / "train.py"): [29, 39, 45],
             str(project / "trainer" / "model.py"): [14, 18, 19]}
    run = run_command([PY, "-m", "trainer.train", "--epochs", "3"], project, module_tmp / "pkg",
                      steps=4, sites=sites)
    return project, run


def test_module_form_stops_and_records_sites(package_run):
    project, run = package_run
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE, run.explain()
    assert record["steps"] == 4 and _flat(record) == run.own_losses()[:4]
    assert record["optimizer"] == "torch.optim.adam.Adam"
    assert record["sites"] == {
        str(project / "trainer" / "train.py"): {29: "ran", 39: "ran", 45: "not-run"},
        str(project / "trainer" / "model.py"): {14: "ran", 18: "not-run", 19: "not-run"}}
    assert not list((project / "trainer").glob("__pycache__/*train*"))  # no probed byte code


# -------------------------------------------------------------------------------------- torchrun

@pytest.fixture(scope="module")
def ddp_run(module_tmp):
    cmd = torchrun_command() + ["--nproc_per_node=2", "train.py", "--epochs", "4"]
    project = copy_project("ddp_torchrun", module_tmp)
    return run_command(cmd, project, module_tmp / "ddp", steps=3)


def test_torchrun_ranks_stop_with_zero_and_agree_on_parameters(ddp_run):
    run = ddp_run
    assert run.returncode == 0, run.explain()
    records = run.records
    assert [r["rank"] for r in records] == [0, 1], run.explain()  # the agent wrote nothing
    for record in records:
        assert (record["status"], record["exit"], record["steps"]) == ("stopped", {"code": 0}, 3)
        assert record["world_size"] == 2
        assert _flat(record) == run.own_losses(f".{record['rank']}")[:3]
    assert records[0]["losses"] != records[1]["losses"]  # each rank saw its own shard
    assert records[0]["params"]["digest"] == records[1]["params"]["digest"]
    assert records[0]["params"]["sum"] == records[1]["params"]["sum"]


# ----------------------------------------------------------------------------------- GradScaler

@pytest.fixture(scope="module")
def scaler_run(module_tmp):
    project = copy_project("grad_scaler", module_tmp)
    return run_command([PY, "train.py", "--inf-at", "2"], project, module_tmp / "scaler", steps=4)


def test_grad_scaler_losses_are_unscaled_and_skips_counted(scaler_run):
    run = scaler_run
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE, run.explain()
    own = run.own_losses()
    assert (record["steps"], record["skipped_steps"]) == (4, 1)
    assert record["loss_source"] == "scaled-backward"
    assert math.isinf(record["losses"][1][0])  # the skipped step's loss joins the next step
    assert [len(step) for step in record["losses"]] == [1, 2, 1, 1]
    assert _flat(record) == own[:5]
    assert run.own[""][0]["scale"] > 1  # the loss passed to backward was scaled


# ------------------------------------------------------------------------- loop shapes, one each

@pytest.fixture(scope="module")
def shapes(module_tmp):
    def go(name, steps):
        project = copy_project(name, module_tmp)
        return lambda: run_command([PY, "train.py"], project, module_tmp / f"{name}-out", steps=steps)

    return run_together({"print_only": go("print_only", 3), "endless": go("endless", 7),
                         "grad_accum": go("grad_accum", 3), "catch_all": go("catch_all", 4),
                         "dataloader_workers": go("dataloader_workers", 5)})


def test_printing_loop_keeps_its_last_line(shapes):
    run = shapes["print_only"]
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE and record["steps"] == 3, run.explain()
    assert _flat(record) == run.own_losses()
    assert run.stdout.splitlines()[-1].startswith("epoch 1 step 3 loss ")


def test_endless_loop_is_stopped(shapes):
    run = shapes["endless"]
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE and record["steps"] == 7, run.explain()
    assert _flat(record) == run.own_losses()


def test_gradient_accumulation_keeps_every_micro_batch_loss(shapes):
    run = shapes["grad_accum"]
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE and record["steps"] == 3, run.explain()
    assert [len(step) for step in record["losses"]] == [4, 4, 4]
    assert _flat(record) == run.own_losses()
    assert record["pending_losses"] == []


def test_catching_base_exception_does_not_keep_it_running(shapes):
    run = shapes["catch_all"]
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE and record["steps"] == 4, run.explain()
    assert "step failed" not in run.stdout and "finished all steps" not in run.stdout
    assert _flat(record) == run.own_losses()


def test_dataloader_workers_write_nothing(shapes):
    run = shapes["dataloader_workers"]
    record = _one(run)
    assert run.returncode == STOP_EXIT_CODE and record["steps"] == 5, run.explain()
    assert _flat(record) == run.own_losses()
    assert len(list((run.out / "records").glob("progress-*"))) == 1


# ------------------------------------------------------------- how a program ends, threads, seeds

PROGRAM = '''import os, random, sys
if "--omp" in sys.argv:
    os.environ["OMP_NUM_THREADS"] = "2"
import torch
print("threads", torch.get_num_threads())
print("draws", torch.rand(1).item(), random.random())
model = torch.nn.Linear(3, 1)
if "--forward-only" in sys.argv:
    with torch.no_grad():
        model(torch.ones(2, 3))
    sys.exit(0)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    model(torch.ones(2, 3)).sum().backward()
    optimizer.step()
if "--raise" in sys.argv:
    raise ValueError("bad batch 7")
sys.exit(3)
'''


GAN = '''import torch
torch.manual_seed(0)
generator, critic = torch.nn.Linear(3, 3), torch.nn.Linear(3, 1)
opt_g = torch.optim.Adam(generator.parameters(), lr=0.01)  # created first, steps second
opt_c = torch.optim.SGD(critic.parameters(), lr=0.01)
opt_unused = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
for step in range(3):
    fake = generator(torch.randn(4, 3))
    loss_c = critic(fake.detach()).mean()
    loss_c.backward()
    opt_c.step()
    out = critic(fake).squeeze(1)
    out.backward(torch.full_like(out, -0.25))  # not a scalar: no single loss
    opt_g.step()
    print("critic", loss_c.item(), flush=True)
'''


@pytest.fixture(scope="module")
def programs(module_tmp):
    (module_tmp / "prog.py").write_text(PROGRAM)
    (module_tmp / "gan.py").write_text(GAN)

    def go(name, *args, **kwargs):
        return lambda: run_command([PY, "prog.py", *args], module_tmp, module_tmp / name, steps=10,
                                   **kwargs)

    return run_together({
        "forward": go("forward", "--forward-only"),
        "omp": go("omp", "--forward-only", "--omp", seed=None, threads=None),
        "exit": go("exit"),
        "raise": go("raise", "--raise"),
        "gan": lambda: run_command([PY, "gan.py"], module_tmp, module_tmp / "gan", steps=10),
    })


def test_no_backward_no_record_and_the_seed_and_threads_applied(programs):
    import random

    import torch
    run = programs["forward"]
    assert run.returncode == 0, run.explain()
    assert list(run.records) == [] and not list((run.out / "records").glob("*progress*"))
    torch.manual_seed(0)
    random.seed(0)
    assert f"draws {torch.rand(1).item()} {random.random()}" in run.stdout
    assert "threads 1" in run.stdout


def test_threads_left_alone_keep_the_program_setting(programs):
    run = programs["omp"]
    assert run.returncode == 0 and "threads 2" in run.stdout, run.explain()


def test_sys_exit_and_exception_are_recorded(programs):
    run = programs["exit"]
    record = _one(run)
    assert run.returncode == 3
    assert (record["status"], record["exit"], record["steps"]) == ("exit", {"code": 3}, 2)
    assert record["params"] is not None and record["params"]["count"] == 2
    run = programs["raise"]
    record = _one(run)
    assert run.returncode == 1
    assert record["status"] == "exception" and record["steps"] == 2
    assert (record["exit"]["type"], record["exit"]["message"]) == ("ValueError", "bad batch 7")
    assert record["exit"]["traceback"][-1] == "ValueError: bad batch 7"


def test_first_created_optimizer_counts_even_when_it_steps_second(programs):
    run = programs["gan"]
    record = _one(run)
    assert run.returncode == 0, run.explain()
    assert (record["status"], record["steps"]) == ("finished", 3)
    assert record["optimizer"] == "torch.optim.adam.Adam"
    critic = [float(line.split()[1]) for line in run.stdout.splitlines()]
    assert record["losses"] == [[value, None] for value in critic]
    assert any("non-scalar" in note for note in record["notes"])
    assert record["params"]["count"] == 2  # the generator's weight and bias
