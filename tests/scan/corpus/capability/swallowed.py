"""Capability queries: unguarded, guarded in place, and swallowed by try/except."""
import torch  # expect: none


def features():
    major, minor = torch.cuda.get_device_capability()  # expect: CU101
    sm = torch.cuda.get_device_properties(0).major  # expect: CU102
    safe = torch.cuda.get_device_capability() or (0, 0)  # expect: none
    safe_major = torch.cuda.get_device_properties(0).minor if torch.version.cuda else 0  # expect: none
    try:
        bf16 = torch.cuda.get_device_capability()[0] >= 8  # expect: CU113
    except Exception:
        bf16 = False  # expect: none
    try:
        fast = torch.cuda.get_device_properties(0).major >= 9  # expect: CU113
    except (TypeError, AttributeError):
        fast = False  # expect: none
    try:
        cap = torch.cuda.get_device_capability(0)  # expect: CU113
        flash = cap >= (8, 0)  # expect: none
    except BaseException:
        flash = False  # expect: none
    try:
        sms = torch.cuda.get_device_properties(0).multi_processor_count  # expect: CU113
    except:  # noqa: E722
        sms = 1  # expect: none
    try:
        guarded_twice = torch.cuda.get_device_capability() or (0, 0)  # expect: none
    except Exception:
        guarded_twice = (0, 0)  # expect: none
    try:
        import flash_attn_local  # expect: none
    except ImportError:
        flash_attn_local = None  # expect: none
    return major, minor, sm, safe, safe_major, bf16, fast, flash, sms, guarded_twice


def helper(device):
    try:
        name = torch.cuda.get_device_name(device)  # expect: CU001
    except RuntimeError:
        name = "unknown"  # expect: none
    props = torch.cuda.get_device_properties(device)  # expect: CU001
    return name, props.total_memory  # expect: none


def from_alias():
    from torch.cuda import get_device_capability as cc  # expect: none
    try:
        return cc()[0]  # expect: CU113
    except TypeError:
        return 0  # expect: none
