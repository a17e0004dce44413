"""The OptunaHub packages in ``optunahub/samplers/``: each loads the way OptunaHub loads a
package, re-exports an hdbo sampler, runs, and carries the files the registry requires."""

from __future__ import annotations

import ast
import importlib.util
import math
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import optuna
import pytest
import yaml
from optuna.trial import TrialState
from packaging.requirements import Requirement
from packaging.version import Version

from hdbo_adapters import optuna as hdbo_optuna
from hdbo_adapters.optuna import ATTR_PROPOSAL

ROOT = Path(__file__).resolve().parents[1]
REGISTRY_ROOT = ROOT / "optunahub"
PACKAGES = sorted(p.name for p in (REGISTRY_ROOT / "samplers").iterdir()
                  if p.is_dir() and not p.name.startswith((".", "_")))

# What the registry requires of a package's README.md, from optuna/optunahub-registry:
# recipes/002_registration.py ("README.md must contain the following sections": the header
# keys author, title, description (strings), tags, optuna_versions (lists of strings) and
# license; tags include "sampler" for package/samplers/; the license must be "MIT License";
# the title is human-readable, not a class name; then the sections Abstract, APIs,
# Installation, Example and Others) and template/README.md (the same header keys).
HEADER_KEYS = {"author": str, "title": str, "description": str, "tags": list,
               "optuna_versions": list, "license": str}
SECTIONS = ("Abstract", "APIs", "Installation", "Example", "Others")
OPTIMUM = np.array([0.3, -0.2, 0.1])


def _optunahub() -> ModuleType:
    """The installed optunahub (with the repository root on sys.path, a missing one would
    import as the namespace package of the ``optunahub/`` folder)."""
    import optunahub

    if not hasattr(optunahub, "load_local_module"):
        pytest.fail("optunahub is not installed (the test extra installs it): "
                    "pip install -e '.[test]'")
    return optunahub


def load(name: str) -> ModuleType:
    return _optunahub().load_local_module(package=f"samplers/{name}",
                                          registry_root=str(REGISTRY_ROOT))


def exported_sampler(module: ModuleType) -> type:
    assert len(module.__all__) == 1, module.__all__
    return getattr(module, module.__all__[0])


def header_and_body(name: str) -> tuple[dict, str]:
    text = (REGISTRY_ROOT / "samplers" / name / "README.md").read_text()
    assert text.startswith("---\n"), "README.md must open with the registry's header"
    header, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(header), body


def quadratic(trial: optuna.Trial) -> float:
    x = np.array([trial.suggest_float(f"x{i}", -1.0, 1.0) for i in range(3)])
    return float(np.sum((x - OPTIMUM) ** 2))


def test_every_public_hdbo_sampler_has_a_package():
    exported = {exported_sampler(load(name)).__name__ for name in PACKAGES}
    assert exported == set(hdbo_optuna.named_samplers())


@pytest.mark.parametrize("name", PACKAGES)
def test_the_package_re_exports_an_hdbo_sampler_and_holds_no_algorithm_code(name):
    sampler_cls = exported_sampler(load(name))
    assert sampler_cls is getattr(hdbo_optuna, sampler_cls.__name__)
    assert name == f"hdbo_{sampler_cls.algorithm_name}" and name.isidentifier()
    for path in (REGISTRY_ROOT / "samplers" / name).glob("*.py"):
        if path.name != "example.py":
            defined = [node for node in ast.walk(ast.parse(path.read_text()))
                       if isinstance(node, (ast.FunctionDef, ast.ClassDef))]
            assert not defined, f"{path.name} defines {[d.name for d in defined]}"


@pytest.mark.parametrize("name", PACKAGES)
def test_five_trials_of_a_3d_quadratic(name):
    sampler = exported_sampler(load(name))(seed=0, budget=5)
    study = optuna.create_study(sampler=sampler)
    study.optimize(quadratic, n_trials=5)
    trials = study.trials
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 5
    points = np.array([[t.params[f"x{i}"] for i in range(3)] for t in trials])
    assert np.all(np.abs(points) <= 1.0) and len(np.unique(points, axis=0)) == 5
    np.testing.assert_allclose([t.value for t in trials],
                               np.sum((points - OPTIMUM) ** 2, axis=1), rtol=1e-12)
    # the first trial, sampled before the search space is known, is the centre of the box,
    # stored as the engine's first design point; the engine proposed the rest
    assert [trials[0].params[f"x{i}"] for i in range(3)] == [0.0, 0.0, 0.0]
    assert trials[0].system_attrs[ATTR_PROPOSAL]["meta"] == {"init": True, "centre": True}
    assert all(ATTR_PROPOSAL in t.system_attrs for t in trials[1:])


@pytest.mark.parametrize("name", PACKAGES)
def test_the_readme_header_has_what_the_registry_requires(name):
    header, body = header_and_body(name)
    for key, kind in HEADER_KEYS.items():
        assert isinstance(header.get(key), kind), f"{key}: expected {kind.__name__}"
        values = header[key] if kind is list else [header[key]]
        assert values and all(isinstance(v, str) and v.strip() for v in values), key
    assert "sampler" in header["tags"]
    assert header["license"] == "MIT License"
    for version in header["optuna_versions"]:
        Version(version)  # raises InvalidVersion
    sampler_name = exported_sampler(load(name)).__name__
    assert header["title"] != sampler_name and " " in header["title"]
    headings = [line[3:].strip() for line in body.splitlines() if line.startswith("## ")]
    assert headings == list(SECTIONS)
    assert f'optunahub.load_module("samplers/{name}")' in body and sampler_name in body


@pytest.mark.parametrize("name", PACKAGES)
def test_license_and_requirements(name):
    folder = REGISTRY_ROOT / "samplers" / name
    assert (folder / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    assert (folder / "LICENSE").read_text().startswith("MIT License")
    lines = [line.strip() for line in (folder / "requirements.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    requirements = [Requirement(line) for line in lines]
    assert [r.name for r in requirements] == ["hdbo"]
    assert "optuna" in requirements[0].extras


@pytest.mark.parametrize("name", PACKAGES)
def test_the_example_runs_on_its_own_package(name, monkeypatch):
    optunahub = _optunahub()
    loaded: list[str] = []

    def load_module(package: str) -> ModuleType:  # the registry's download, from this checkout
        loaded.append(package)
        return optunahub.load_local_module(package=package, registry_root=str(REGISTRY_ROOT))

    monkeypatch.setattr(optunahub, "load_module", load_module)
    path = REGISTRY_ROOT / "samplers" / name / "example.py"
    spec = importlib.util.spec_from_file_location(f"optunahub_example_{name}", path)
    example = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, example)
    spec.loader.exec_module(example)
    study = example.main(n_trials=5)
    assert loaded == [f"samplers/{name}"]
    assert isinstance(study.sampler, exported_sampler(load(name)))
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    assert len(complete) == 5 and all(math.isfinite(t.value) for t in complete)
