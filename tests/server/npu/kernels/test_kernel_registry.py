"""The kernel registry: modules named by VNPU_KERNELS are imported once, a module that fails is named, and the
signature is checked when a kernel is registered."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from server.npu import kernels as K


def test_a_user_module_registers_its_kernels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "my_kernels_19.py").write_text(
        "from server.npu import kernels as K\n"
        "@K.kernel('Scale19', K.ptr('float32'), K.f32)\n"
        "def scale(k, x, s):\n    x *= s\n"
    )
    (tmp_path / "broken_kernels_19.py").write_text("raise RuntimeError('no numpy here')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert "my_kernels_19" in K.load(["my_kernels_19", " "], entry_points_too=False)
        assert K.load(["my_kernels_19"], entry_points_too=False) == []  # once
        found = K.lookup("Scale19")
        assert found is not None and [a.name for a in found.signature] == ["ptr(float32)", "f32"]
        with pytest.raises(ImportError, match=r"broken_kernels_19.*no numpy here"):
            K.load(["broken_kernels_19"], entry_points_too=False)
    finally:
        K.unregister("Scale19")
        sys.modules.pop("my_kernels_19", None)
    with pytest.raises(ValueError, match="C identifier"):
        K.register("not a name", (), lambda k: None)
    with pytest.raises(TypeError, match="argument types"):
        K.register("Fine", ("u32",), lambda k: None)  # type: ignore[arg-type]
    assert {"add_custom", "EasyOPf", "ErrorOPf", "KernelPrint", "DeviceWrite", "DeviceRead"} <= set(K.names())
