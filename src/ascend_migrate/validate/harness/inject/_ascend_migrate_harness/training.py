"""Steps, losses, the stop after N steps and the per-process record.

`configure` runs at start-up (no torch); `on_import("torch", module)` puts the patches in once
the program's own `import torch` has finished:

- a step is a call of the counted optimizer's `step` (global post hook); the counted optimizer is
  the first one created that steps (see `_on_step`); a GradScaler step that skips the optimizer
  (inf/nan) counts as skipped and its losses join the next step's;
- every tensor passed to `Tensor.backward` / `torch.autograd.backward` between two steps is kept
  detached (no device sync) and read as a number only when the record is written; a loss scaled
  by a GradScaler is recorded unscaled;
- after the Nth counted step the parameters are summarised, and at the next backward or
  optimizer step (or when the program ends) the record is written and the process leaves with
  os._exit, which no `except BaseException` in the program can swallow.
"""
import atexit
import os
import sys
import time
import types
import weakref

from . import ENV_OPS, PROGRESS_PREFIX, RECORD_PREFIX, SCHEMA, STOP_EXIT_CODE

_UNSCALED = "_ascend_migrate_unscaled"  # attribute put on a GradScaler-scaled loss
_WRAPPED = "_ascend_migrate_wrapped"
_PROGRESS_EVERY = 0.5  # seconds between two progress-file writes
_TRACEBACK_LINES = 12
_PENDING_CAP = 10000  # losses kept between two counted steps (an optimizer that never steps)


class _State:
    def __init__(self, out_dir, limit, seed, threads, sites):
        self.out_dir = out_dir
        self.limit = limit
        self.seed = seed
        self.threads = threads
        self.sites = sites
        self.inert = False  # forked children (DataLoader workers) never record
        self.active = False  # saw a backward or an optimizer step
        self.start_time = None
        self.steps = 0
        self.skipped = 0
        self.losses = []  # per counted step: [detached tensor or None, ...]
        self.pending = []  # since the last counted step
        self.scaled = False
        self.non_scalar_seen = False
        self.step_ends = []  # time.monotonic() at the end of each counted step
        self.counted = None  # weakref to the counted optimizer
        self.provisional = False  # an optimizer created earlier may still take over
        self.created = weakref.WeakKeyDictionary()  # optimizer -> creation index
        self.created_n = 0
        self.step_events = 0  # optimizer steps of any optimizer (for GradScaler skips)
        self.backward_depth = 0
        self.scaler_depth = 0
        self.stop_pending = False
        self.params = None
        self.device = None
        self.optimizer_class = None
        self.applied_seed = None
        self.applied_threads = None
        self.torch = None
        self.notes = []
        self.exit_code = None  # from sys.exit / exit() / quit()
        self.exception = None
        self.written = False
        self.last_progress = 0.0
        self.progress_dirty = False
        self.rank = None
        self.world = None


S = None


def _note(text):
    if S is not None and text not in S.notes and len(S.notes) < 50:
        S.notes.append(text)


def configure(out_dir, limit, seed, threads, sites):
    global S
    S = _State(out_dir, limit, seed, threads, sites)
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork)
    _wrap_exits()


def _after_fork():
    if S is not None:
        S.inert = True
        S.pending = []
        S.losses = []


# ------------------------------------------------------------------------- how the program ended

def _exit_code_of(status):
    if status is None:
        return 0
    if isinstance(status, int):
        return status
    return 1  # sys.exit("message") prints it and exits 1


def note_exit(status):
    if S is not None:
        S.exit_code = _exit_code_of(status)


class _Quitter:
    """builtins.exit / quit, recording the code before leaving."""

    def __init__(self, original):
        self._original = original

    def __repr__(self):
        return repr(self._original)

    def __call__(self, code=None):
        note_exit(code)
        return self._original(code)


def _describe_exception(tp, value, tb):
    import traceback
    try:
        lines = "".join(traceback.format_exception(tp, value, tb)).rstrip().splitlines()
    except Exception:
        lines = []
    try:
        message = str(value)
    except Exception:
        message = "<unprintable>"
    return {"type": getattr(tp, "__name__", str(tp)), "message": message[:4000],
            "traceback": lines[-_TRACEBACK_LINES:]}


def _wrap_exits():
    original_exit = sys.exit

    def exit(status=None):
        note_exit(status)
        return original_exit(status)

    exit.__doc__ = original_exit.__doc__
    sys.exit = exit
    import builtins
    for name in ("exit", "quit"):
        current = getattr(builtins, name, None)
        if current is not None:
            setattr(builtins, name, _Quitter(current))
    original_hook = sys.excepthook

    def excepthook(tp, value, tb):
        if S is not None and S.exception is None:
            S.exception = _describe_exception(tp, value, tb)
        return original_hook(tp, value, tb)

    sys.excepthook = excepthook


# ------------------------------------------------------------------------------------ torch import

def on_import(name, module):
    """Called once `name` has finished importing."""
    if S is None:
        return
    try:
        if name == "torch":
            _patch_torch(module)
            if "torch_npu" in sys.modules:
                _patch_npu()
        elif name == "torch_npu" and S.torch is not None:
            _patch_npu()
    except Exception as exc:
        _note("patching %s failed: %s: %s" % (name, type(exc).__name__, exc))


def _patch_torch(torch):
    if S.torch is not None:
        return
    S.torch = torch
    if S.threads is not None:
        torch.set_num_threads(S.threads)
        S.applied_threads = S.threads
    if S.seed is not None:
        import random
        random.seed(S.seed)
        torch.manual_seed(S.seed)
        numpy = sys.modules.get("numpy")  # seeded only when already imported
        if numpy is not None:
            try:
                numpy.random.seed(S.seed % (2 ** 32))
            except Exception as exc:
                _note("numpy not seeded: %s" % exc)
        S.applied_seed = S.seed
    _patch_optimizer(torch)
    _patch_backward(torch)
    amp = getattr(torch, "amp", None)
    scaler = getattr(amp, "GradScaler", None) if amp is not None else None
    if scaler is not None:
        _patch_scaler_family(scaler)
    if os.environ.get(ENV_OPS):
        from . import operators
        operators.start_if_asked(_steps_done)


def _steps_done():
    return S.steps if S is not None else None


def _attribute_path(obj, dotted):
    for name in dotted.split("."):
        if obj is None:
            return None
        obj = getattr(obj, name, None)
    return obj


def _patch_npu():
    """torch_npu's GradScaler (torch_npu.npu.amp / torch.npu.amp), when it has its own scale
    or step; one that inherits torch.amp.GradScaler is covered already."""
    for cls in (_attribute_path(sys.modules.get("torch_npu"), "npu.amp.GradScaler"),
                _attribute_path(S.torch, "npu.amp.GradScaler")):
        if isinstance(cls, type):
            _wrap_scaler_class(cls)


# ------------------------------------------------------------------------------------- optimizers

def _patch_optimizer(torch):
    import torch.optim.optimizer as optimizer_module  # already imported by torch itself
    optimizer = optimizer_module.Optimizer
    original_init = optimizer.__init__
    if getattr(original_init, _WRAPPED, False):
        return

    def __init__(self, *args, **kwargs):
        original_init(self, *args, **kwargs)
        try:
            if self not in S.created:
                S.created[self] = S.created_n
                S.created_n += 1
        except TypeError:
            pass

    __init__.__doc__ = original_init.__doc__
    __init__.__wrapped__ = original_init
    setattr(__init__, _WRAPPED, True)
    optimizer.__init__ = __init__
    optimizer_module.register_optimizer_step_pre_hook(_pre_step)
    optimizer_module.register_optimizer_step_post_hook(_post_step)


def _index(opt):
    try:
        return S.created.get(opt, float("inf"))
    except TypeError:
        return float("inf")


def _pre_step(opt, args, kwargs):
    if S.stop_pending and not S.inert:
        _stop()


def _post_step(opt, args, kwargs):
    S.step_events += 1
    if S.inert:
        return
    try:
        _on_step(opt)
    except Exception as exc:
        _note("step not recorded: %s: %s" % (type(exc).__name__, exc))


def _choose(opt):
    S.counted = weakref.ref(opt)
    cls = type(opt)
    S.optimizer_class = "%s.%s" % (cls.__module__, cls.__qualname__)
    mine = _index(opt)
    S.provisional = any(i < mine for i in list(S.created.values()))


def _on_step(opt):
    """Counting rule: the first optimizer that steps is counted, unless an optimizer created
    before it steps before the chosen one's second step (a GAN's generator created first but
    stepped second); then that one is counted and the two first steps are one."""
    _activate()
    current = S.counted() if S.counted is not None else None
    if current is None:
        if S.counted is not None:
            _note("the counted optimizer was released; counting %s from step %d"
                  % (type(opt).__name__, S.steps + 1))
        _choose(opt)
        _count()
    elif opt is current:
        S.provisional = False
        _count()
    elif S.provisional and S.steps == 1 and _index(opt) < _index(current):
        _choose(opt)
        S.losses[0] = S.losses[0] + S.pending
        S.pending = []
        S.step_ends[0] = time.monotonic()
        _note("counting %s, created before %s, which stepped first"
              % (type(opt).__name__, type(current).__name__))


def _count():
    S.steps += 1
    S.losses.append(S.pending)
    S.pending = []
    S.step_ends.append(time.monotonic())
    if S.rank is None and (S.steps == 1 or S.steps % 64 == 0):
        _find_rank()  # RANK, or torch.distributed once initialised (looked up now and then)
    if S.limit and S.steps >= S.limit:
        S.stop_pending = True
        S.params = _param_summary()
        _progress(force=True)
    else:
        _progress()


# --------------------------------------------------------------------------------------- backward

def _patch_backward(torch):
    tensor_backward = torch.Tensor.backward
    autograd_backward = torch.autograd.backward
    if getattr(tensor_backward, _WRAPPED, False):
        return

    def backward(self, *args, **kwargs):
        if S.backward_depth:
            return tensor_backward(self, *args, **kwargs)
        _on_backward(self)
        S.backward_depth += 1
        try:
            return tensor_backward(self, *args, **kwargs)
        finally:
            S.backward_depth -= 1

    def autograd_backward_wrapper(tensors, *args, **kwargs):
        if S.backward_depth:
            return autograd_backward(tensors, *args, **kwargs)
        _on_backward(tensors)
        S.backward_depth += 1
        try:
            return autograd_backward(tensors, *args, **kwargs)
        finally:
            S.backward_depth -= 1

    for wrapper, original in ((backward, tensor_backward),
                              (autograd_backward_wrapper, autograd_backward)):
        wrapper.__doc__ = original.__doc__
        wrapper.__name__ = original.__name__
        wrapper.__qualname__ = getattr(original, "__qualname__", original.__name__)
        wrapper.__wrapped__ = original
        setattr(wrapper, _WRAPPED, True)
    torch.Tensor.backward = backward
    torch.autograd.backward = autograd_backward_wrapper


def _on_backward(tensors):
    if S.inert:
        return
    if S.stop_pending:
        _stop()
    try:
        _activate()
        tensor_type = S.torch.Tensor
        loss = tensors
        if not isinstance(loss, tensor_type):
            seq = tensors if isinstance(tensors, (list, tuple)) else ()
            loss = seq[0] if len(seq) == 1 and isinstance(seq[0], tensor_type) else None
        if len(S.pending) >= _PENDING_CAP:
            _note("more than %d backward calls without a counted step: later ones not kept"
                  % _PENDING_CAP)
        elif loss is not None and loss.numel() == 1:
            unscaled = getattr(loss, _UNSCALED, None)
            if unscaled is not None:
                S.pending.append(unscaled)
                S.scaled = True
            else:
                S.pending.append(loss.detach())
        else:
            S.pending.append(None)
            if not S.non_scalar_seen:
                S.non_scalar_seen = True
                _note("a backward of a non-scalar or of several tensors has no single loss "
                      "(recorded as null; first at step %d)" % (S.steps + 1))
        if S.progress_dirty:
            _progress()
    except Exception as exc:
        _note("loss not recorded: %s: %s" % (type(exc).__name__, exc))


# --------------------------------------------------------------------------------------- GradScaler

def _tag(scaled, original):
    tensor_type = S.torch.Tensor
    if isinstance(scaled, tensor_type) and isinstance(original, tensor_type):
        if scaled is not original:
            setattr(scaled, _UNSCALED, original.detach())
    elif isinstance(scaled, (list, tuple)) and isinstance(original, (list, tuple)):
        for a, b in zip(scaled, original):
            _tag(a, b)


def _wrap_scaler_class(cls):
    members = vars(cls)
    scale = members.get("scale")
    if isinstance(scale, types.FunctionType) and not getattr(scale, _WRAPPED, False):
        def scale_wrapper(self, outputs, *args, _original=scale, **kwargs):
            result = _original(self, outputs, *args, **kwargs)
            if not S.inert:
                try:
                    _tag(result, outputs)
                except Exception as exc:
                    _note("scaled loss not linked: %s" % exc)
            return result

        _dress(scale_wrapper, scale)
        cls.scale = scale_wrapper
    step = members.get("step")
    if isinstance(step, types.FunctionType) and not getattr(step, _WRAPPED, False):
        def step_wrapper(self, optimizer, *args, _original=step, **kwargs):
            if S.scaler_depth:
                return _original(self, optimizer, *args, **kwargs)
            if S.stop_pending and not S.inert:
                _stop()
            before = S.step_events
            S.scaler_depth += 1
            try:
                result = _original(self, optimizer, *args, **kwargs)
            finally:
                S.scaler_depth -= 1
            if S.step_events == before and not S.inert:
                try:
                    enabled = self.is_enabled()
                except Exception:
                    enabled = True
                current = S.counted() if S.counted is not None else None
                if enabled and (current is None or current is optimizer):
                    _activate()
                    S.skipped += 1
                    _progress()
            return result

        _dress(step_wrapper, step)
        cls.step = step_wrapper


def _dress(wrapper, original):
    wrapper.__doc__ = getattr(original, "__doc__", None)
    wrapper.__name__ = getattr(original, "__name__", wrapper.__name__)
    wrapper.__wrapped__ = original
    setattr(wrapper, _WRAPPED, True)


def _patch_scaler_family(base):
    """torch.amp.GradScaler and every subclass, now and later (the CUDA and CPU ones inherit its
    `scale`; FSDP's ShardedGradScaler and torch_npu's may have their own)."""
    todo, seen = [base], set()
    while todo:
        cls = todo.pop()
        if cls in seen:
            continue
        seen.add(cls)
        _wrap_scaler_class(cls)
        try:
            todo.extend(cls.__subclasses__())
        except TypeError:
            pass
    previous = vars(base).get("__init_subclass__")

    def __init_subclass__(cls, **kwargs):
        if previous is not None:
            previous.__get__(None, cls)(**kwargs)
        else:
            super(base, cls).__init_subclass__(**kwargs)
        try:
            _wrap_scaler_class(cls)
        except Exception as exc:
            _note("GradScaler subclass %s not patched: %s" % (cls.__name__, exc))

    base.__init_subclass__ = classmethod(__init_subclass__)


# ---------------------------------------------------------------------------------- activity, rank

def _activate():
    if not S.active:
        S.active = True
        S.start_time = time.monotonic()
        atexit.register(_at_exit)  # registered late, so it runs before torch's own handlers


def _find_rank():
    rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank is not None:
        try:
            S.rank = int(rank)
            S.world = int(world) if world else None
            return
        except ValueError:
            pass
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            S.rank = dist.get_rank()
            S.world = dist.get_world_size()
    except Exception:
        pass


def _rank_world():
    if S.rank is None:
        _find_rank()
    return (S.rank if S.rank is not None else 0), (S.world if S.world is not None else 1)


# ---------------------------------------------------------------------------------------- writing

def _atomic_write(path, text, sync):
    tmp = os.path.join(os.path.dirname(path), "." + os.path.basename(path) + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(text)
        if sync:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def _progress(force=False):
    now = time.monotonic()
    if not force and now - S.last_progress < _PROGRESS_EVERY:
        S.progress_dirty = True
        return
    S.last_progress = now
    S.progress_dirty = False
    rank, _world = _rank_world()
    path = os.path.join(S.out_dir, "%s%d.txt" % (PROGRESS_PREFIX, os.getpid()))
    try:
        _atomic_write(path, "%d %d %.3f %d\n" % (S.steps, S.skipped, time.time(), rank), False)
    except OSError as exc:
        _note("progress not written: %s" % exc)


def _param_summary():
    """Over the counted optimizer's param_groups (each tensor once, in order): shape, dtype and a
    SHA-256 of the bytes of each tensor, combined into one digest, plus a float64 sum."""
    import ctypes
    import hashlib
    opt = S.counted() if S.counted is not None else None
    if opt is None:
        return None
    torch = S.torch
    combined = hashlib.sha256()
    total, count, numel, seen = 0.0, 0, 0, set()
    try:
        groups = list(opt.param_groups)
    except Exception as exc:
        _note("parameters not summarised: %s" % exc)
        return None
    for group in groups:
        for param in group.get("params", ()):
            if id(param) in seen or not isinstance(param, torch.Tensor):
                continue
            seen.add(id(param))
            tensor = param.detach()
            if S.device is None:
                S.device = str(tensor.device)
            count += 1
            numel += tensor.numel()
            combined.update(("%s|%s|" % (tuple(tensor.shape), tensor.dtype)).encode())
            try:
                cpu = tensor.to("cpu").contiguous()
                size = cpu.numel() * cpu.element_size()
                data = ctypes.string_at(cpu.data_ptr(), size) if size else b""
                combined.update(hashlib.sha256(data).digest())
                if cpu.is_floating_point() or not cpu.is_complex():
                    total += float(cpu.double().sum())
            except Exception as exc:
                combined.update(b"unhashable")
                _note("parameter %d not hashed: %s: %s" % (count, type(exc).__name__, exc))
    return {"digest": combined.hexdigest(), "sum": total, "count": count, "numel": numel,
            "hash": "sha256 of shape, dtype and bytes per tensor"}


def _number(value):
    if value is None:
        return None
    try:
        return float(value)
    except Exception as exc:
        _note("a loss could not be read: %s" % exc)
        return None


def _record(status, exit_info):
    rank, world = _rank_world()
    torch = S.torch
    step_times, previous = [], S.start_time
    for end in S.step_ends:
        step_times.append(end - previous if previous is not None else None)
        previous = end
    sites = details = None
    if S.sites is not None:
        try:
            sites, details = S.sites.report()
        except Exception as exc:
            _note("edit sites not reported: %s: %s" % (type(exc).__name__, exc))
    num_threads = None
    try:
        num_threads = torch.get_num_threads() if torch is not None else None
    except Exception:
        pass
    if S.device is None and S.params is None:
        opt = S.counted() if S.counted is not None else None
        try:
            for group in opt.param_groups if opt is not None else ():
                for param in group.get("params", ()):
                    S.device = str(param.device)
                    break
                if S.device is not None:
                    break
        except Exception:
            pass
    return {
        "schema": SCHEMA,
        "pid": os.getpid(),
        "rank": rank,
        "world_size": world,
        "status": status,
        "exit": exit_info,
        "steps": S.steps,
        "skipped_steps": S.skipped,
        "step_limit": S.limit,
        "losses": [[_number(v) for v in step] for step in S.losses],
        "pending_losses": [_number(v) for v in S.pending],
        "loss_source": "scaled-backward" if S.scaled else "backward",
        "params": S.params,
        "threads": S.applied_threads,
        "num_threads": num_threads,
        "seed": S.applied_seed,
        "torch": getattr(torch, "__version__", None) if torch is not None else None,
        "device": S.device,
        "optimizer": S.optimizer_class,
        "python": sys.version.split()[0],
        "argv": [str(a) for a in sys.argv],
        "sites": sites,
        "site_details": details,
        "step_times": step_times,
        "notes": list(S.notes),
    }


def _write_record(status, exit_info):
    if S.written:
        return
    S.written = True
    import json
    try:
        record = _record(status, exit_info)
        text = json.dumps(record, indent=1, default=str)
        name = "%s%d-%d.json" % (RECORD_PREFIX, record["rank"], os.getpid())
        path = os.path.join(S.out_dir, name)
        _atomic_write(path, text, True)
    except Exception as exc:
        try:
            sys.stderr.write("ascend-migrate harness: record not written: %s: %s\n"
                             % (type(exc).__name__, exc))
        except Exception:
            pass
    _progress(force=True)


def _soft_exit():
    """Under torchrun, or in a multiprocessing child, a non-zero exit makes the launcher kill
    the other ranks before they write: leave with 0 there and let the parent read "stopped"."""
    if os.environ.get("TORCHELASTIC_RUN_ID"):
        return True
    mp = sys.modules.get("multiprocessing")
    try:
        return mp is not None and mp.parent_process() is not None
    except Exception:
        return False


def _flush_all():
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            if stream is not None:
                stream.flush()
        except Exception:
            pass
    logging = sys.modules.get("logging")
    if logging is not None:
        try:
            logging.shutdown()
        except Exception:
            pass


def _end_children():
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return
    try:
        children = mp.active_children()
    except Exception:
        return
    for child in children:
        try:
            child.terminate()
        except Exception:
            pass
    deadline = time.monotonic() + 5.0
    for child in children:
        try:
            child.join(max(0.0, deadline - time.monotonic()))
            if child.is_alive():
                child.kill()
                child.join(1.0)
        except Exception:
            pass


def _stop():
    """After the last counted step: record, flush, end the children, leave."""
    code = 0 if _soft_exit() else STOP_EXIT_CODE
    if S.params is None:
        S.params = _param_summary()
    if os.environ.get(ENV_OPS):
        from . import operators
        operators.write("stopped")
    _write_record("stopped", {"code": code})
    _flush_all()
    _end_children()
    _flush_all()
    os._exit(code)


def _at_exit():
    """The program ended by itself (normal end, sys.exit, uncaught exception)."""
    if S is None or S.inert or not S.active or S.written:
        return
    exception = S.exception
    if exception is None and getattr(sys, "last_value", None) is not None:
        exception = _describe_exception(getattr(sys, "last_type", None), sys.last_value,
                                        getattr(sys, "last_traceback", None))
    if exception is not None:
        status, info = "exception", exception
    elif S.exit_code is not None:
        status, info = "exit", {"code": S.exit_code}
    else:
        status, info = "finished", None  # (a `raise SystemExit(n)` of the program looks the same)
    if S.params is None:
        try:
            S.params = _param_summary()
        except Exception as exc:
            _note("parameters not summarised: %s" % exc)
    _write_record(status, info)
