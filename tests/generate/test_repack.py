"""model.repack: the CPU report read, `auto` resolved, and the params llama.cpp gets."""

from __future__ import annotations

import signal
import types
from pathlib import Path

import pytest

from vbw.generate import repack

AMX_CPU = ("processor\t: 0\nmodel name\t: Intel(R) Xeon(R) Platinum 8480+\n"
           "flags\t\t: fpu sse2 avx2 avx512f amx_bf16 avx512_fp16 amx_tile amx_int8\n")
PLAIN_CPU = "processor\t: 0\nflags\t\t: fpu sse2 avx2 avx512f\n"
ARM_CPU = "processor\t: 0\nFeatures\t: fp asimd evtstrm aes\n"


def _cpu(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cpuinfo"
    path.write_text(text)
    return path


def test_auto_is_off_on_a_cpu_that_reports_amx(tmp_path: Path) -> None:
    amx = _cpu(tmp_path, AMX_CPU)
    assert repack.crash_flag(amx) == "amx_int8"
    assert repack.resolve("auto", amx) is False
    assert repack.resolve("on", amx) is True  # as said, even where it crashes
    assert repack.resolve("off", amx) is False


@pytest.mark.parametrize("text", [PLAIN_CPU, ARM_CPU, ""])
def test_auto_keeps_llama_cpps_default_elsewhere(tmp_path: Path, text: str) -> None:
    cpu = _cpu(tmp_path, text)
    assert repack.crash_flag(cpu) is None
    assert repack.resolve("auto", cpu) is True
    assert repack.resolve("off", cpu) is False


def test_one_amx_flag_is_enough(tmp_path: Path) -> None:
    for flag in repack.CRASHING_FLAGS:
        cpu = _cpu(tmp_path, f"flags\t: avx2 {flag}\n")
        assert repack.resolve("auto", cpu) is False, flag
    # a flag that merely contains the name is not the flag
    assert repack.resolve("auto", _cpu(tmp_path, "flags\t: avx2 xamx_int8\n")) is True


def test_no_cpu_report_means_llama_cpps_default(tmp_path: Path) -> None:
    assert repack.cpu_flags(tmp_path / "absent") == frozenset()
    assert repack.resolve("auto", tmp_path / "absent") is True


def test_the_real_machine_is_read() -> None:
    flags = repack.cpu_flags()
    has_amx = any(f in flags for f in repack.CRASHING_FLAGS)
    assert repack.resolve("auto") is (not has_amx)


class _Params:
    use_extra_bufts = True


def _fake_llama_cpp() -> types.SimpleNamespace:
    low = types.SimpleNamespace(llama_model_default_params=_Params)
    return types.SimpleNamespace(llama_cpp=low)


def test_off_sets_use_extra_bufts_false_while_the_model_is_built() -> None:
    lib = _fake_llama_cpp()
    original = lib.llama_cpp.llama_model_default_params
    with repack.extra_bufts(lib, False):
        assert lib.llama_cpp.llama_model_default_params().use_extra_bufts is False
    assert lib.llama_cpp.llama_model_default_params is original
    assert lib.llama_cpp.llama_model_default_params().use_extra_bufts is True


def test_on_leaves_the_params_as_llama_cpp_makes_them() -> None:
    lib = _fake_llama_cpp()
    original = lib.llama_cpp.llama_model_default_params
    with repack.extra_bufts(lib, True):
        assert lib.llama_cpp.llama_model_default_params is original


def test_the_patch_is_undone_when_loading_fails() -> None:
    lib = _fake_llama_cpp()
    original = lib.llama_cpp.llama_model_default_params
    with pytest.raises(RuntimeError), repack.extra_bufts(lib, False):
        raise RuntimeError("load failed")
    assert lib.llama_cpp.llama_model_default_params is original


def test_the_header_records_the_resolved_setting(tmp_path: Path, monkeypatch) -> None:
    from vbw.config import EngineConfig, LocalBackendConfig, bundled_model
    from vbw.generate.local import LocalProvider
    from vbw.generate.model import ModelFile

    mf = ModelFile(path="-", sha256="0" * 64, source="path", file="m.gguf")
    engine = EngineConfig(name="llamacpp")
    backend = LocalBackendConfig(name="local")
    for text, setting, want in [(AMX_CPU, "auto", False), (PLAIN_CPU, "auto", True),
                                (AMX_CPU, "on", True), (PLAIN_CPU, "off", False)]:
        monkeypatch.setattr(repack, "CPUINFO", _cpu(tmp_path, text))
        model = bundled_model("smollm2_135m").model_copy(update={"repack": setting})
        assert LocalProvider().planned(backend, model, engine, mf)["repack"] is want


@pytest.mark.parametrize("cpu, setting, sig, says", [
    (AMX_CPU, "on", signal.SIGSEGV, "weight repacking on a CPU with amx_int8"),
    (AMX_CPU, "on", signal.SIGBUS, "run with model.repack=off"),
    (AMX_CPU, "off", signal.SIGSEGV, "native code (model.repack=off (off))"),
    (PLAIN_CPU, "auto", signal.SIGSEGV, "native code (model.repack=auto (on))"),
    (PLAIN_CPU, "auto", signal.SIGILL, "CMAKE_ARGS=-DGGML_NATIVE=OFF"),
    (AMX_CPU, "on", signal.SIGABRT, "stopped on a failed check"),
])
def test_a_crash_is_read_with_the_setting_that_matters(tmp_path: Path, monkeypatch, cpu: str,
                                                       setting: str, sig: int,
                                                       says: str) -> None:
    from vbw.config import bundled_model
    from vbw.generate.local import LocalProvider

    monkeypatch.setattr(repack, "CPUINFO", _cpu(tmp_path, cpu))
    model = bundled_model("smollm2_135m").model_copy(update={"repack": setting})
    assert says in LocalProvider().crash_cause(model, sig)
