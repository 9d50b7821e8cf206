import json
import subprocess
import sys
from pathlib import Path

from ascend_migrate.diagnose.render import render_reference

REPO = Path(__file__).resolve().parents[2]
LOGS = REPO / "tests" / "fixtures" / "check" / "logs"


def run(args, stdin=None):
    return subprocess.run([sys.executable, "-m", "ascend_migrate", "diagnose", *args], input=stdin,
                          capture_output=True, text=True, cwd=REPO, timeout=60)


def test_file_human_output():
    res = run([str(LOGS / "import_without_cann.log")])
    assert res.returncode == 1  # a known error was found
    assert "* [cann-libhccl-missing]" in res.stdout and "fix:" in res.stdout and "at:      line 17" in res.stdout
    assert "confirm: " in res.stdout


def test_stdin_json():
    res = run(["-", "--json"], stdin=(LOGS / "ddp_hccl_timeout.log").read_text())
    rep = json.loads(res.stdout)
    assert res.returncode == 1 and rep["source"] == "<stdin>" and rep["primary"] == "npu-out-of-memory"
    assert len(rep["matches"]) >= 3
    # the ERR suffix and "HCCL function error" of rank 0 are folded into its timeout, line for line
    timeout = next(m for m in rep["matches"] if m["id"] == "hccl-exec-timeout")
    assert {(r["id"], r["line_no"]) for r in timeout["relayed"]} == {("torch-npu-err-code", 14), ("hccl-call-failed", 14)}
    assert next(r for r in timeout["relayed"] if r["id"] == "torch-npu-err-code")["code"] == "ERR02200"


def test_min_confidence_and_no_match_exit_0():
    res = run(["-", "--min-confidence", "high"], stdin="ModuleNotFoundError: No module named 'mypkg.layers'\n")
    assert res.returncode == 0 and "no known Ascend failure" in res.stdout
    res = run(["-"], stdin="ModuleNotFoundError: No module named 'mypkg.layers'\n")
    assert res.returncode == 1 and "module-not-found-project" in res.stdout


def test_warnings_only_exit_0_but_listed():
    res = run(["-"], stdin="Warning: CAUTION: The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on the CPU.\n")
    assert res.returncode == 0 and "op-fallback-to-cpu" in res.stdout and "0 error(s)" in res.stdout


def test_usage_errors(tmp_path):
    assert run([str(tmp_path / "missing.log")]).returncode == 2
    assert run([str(tmp_path)]).returncode == 2
    bad = tmp_path / "bad.yaml"
    bad.write_text("signatures: 3\n")
    res = run(["--kb", str(bad), "-"], stdin="x")
    assert res.returncode == 2 and "signatures: missing or not a list" in res.stderr


def test_list_and_script_wrapper(tmp_path):
    res = run(["--list"])
    assert res.returncode == 0 and len(res.stdout.splitlines()) >= 30
    res = subprocess.run([sys.executable, str(REPO / "scripts" / "diagnose_npu_error.py"), str(LOGS / "training_mixed.log"), "--json"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert res.returncode == 1 and json.loads(res.stdout)["primary"] == "dtype-mismatch"


def test_stray_bad_bytes_are_replaced_not_fatal(tmp_path):
    p = tmp_path / "run.log"
    p.write_bytes(b"step 1 \xff\xc3 loss=nan\nNPU out of memory. Tried to allocate\n")
    res = run([str(p), "--json"])
    assert res.returncode == 1 and json.loads(res.stdout)["primary"] == "npu-out-of-memory"


def test_empty_and_binary_files_get_a_clear_message(tmp_path):
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    res = run([str(empty)])
    assert res.returncode == 2 and "is empty" in res.stderr and not res.stdout
    blank = tmp_path / "blank.log"
    blank.write_bytes(b"\n\n   \n")
    assert run([str(blank)]).returncode == 2
    core = tmp_path / "core.bin"
    core.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 8)
    res = run([str(core)])
    assert res.returncode == 2 and "ELF" in res.stderr
    dump = tmp_path / "dump.log"
    dump.write_bytes(bytes(200) + b"NPU out of memory\n" + bytes(200))
    res = run([str(dump)])
    assert res.returncode == 2 and "binary" in res.stderr


def test_gzip_and_utf16_logs(tmp_path):
    import gzip
    gz = tmp_path / "rank0.log.gz"
    gz.write_bytes(gzip.compress(b"noise\nImportError: libhccl.so: cannot open shared object file: No such file or directory\n"))
    assert json.loads(run([str(gz), "--format", "json"]).stdout)["primary"] == "cann-libhccl-missing"
    u16 = tmp_path / "win.log"
    u16.write_bytes("noise\r\nRuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\r\n".encode("utf-16"))
    assert json.loads(run([str(u16), "--json"]).stdout)["primary"] == "npu-out-of-memory"


def test_json_and_text_carry_the_same_fields():
    text = (LOGS / "ddp_hccl_timeout.log").read_text()
    rep = json.loads(run(["-", "--format", "json"], stdin=text).stdout)
    out = run(["-"], stdin=text).stdout
    for m in rep["matches"]:
        for key, value in m.items():
            if value in (None, "", []) or key in ("decoded", "details", "source"):
                continue
            if key == "relayed":  # shown as "line N [id] code" on the match's `relayed:` line
                for r in value:
                    assert f"line {r['line_no']} [{r['id']}]" in out.replace("\n    ", " ").replace("  ", " "), r
                continue
            shown = str(value) if key != "line_no" else f"line {value}"
            assert shown.split("\n")[0][:60] in out.replace("\n    ", " ").replace("  ", " ") or shown in out, (key, value)


def test_quiet_prints_only_the_root_cause():
    res = run(["-", "-q"], stdin=(LOGS / "ddp_hccl_timeout.log").read_text())
    assert res.returncode == 1 and res.stdout.startswith("npu-out-of-memory\t") and len(res.stdout.splitlines()) == 1


def test_exit_codes_are_documented_in_help_and_docs():
    helptext = run(["--help"]).stdout
    for line in ("0  no known error found", "1  at least one known error found", "2  usage or input error"):
        assert line in helptext
    readme = (REPO / "README.md").read_text()
    assert "diagnose" in readme and "docs/host.md" in readme  # the README points at the page
    page = (REPO / "docs" / "host.md").read_text()
    assert "diagnose" in page and "0 no known error found, 1 a known error found, 2 usage or input error" in " ".join(page.split())


def test_generated_reference_is_current():
    text = render_reference()
    assert (REPO / "references" / "troubleshooting.md").read_text() == text
    assert "`cann-libhccl-missing`" in text and "| 200 | HCCL |" in text
