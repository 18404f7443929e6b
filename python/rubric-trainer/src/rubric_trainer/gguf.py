"""Reading a GGUF file (llama.cpp's model format): its metadata, its tensor table, and the float
tensors themselves. What μ needs to start from a small pretrained llama (``mu_llama``) with no
transformers and no download: the file node-llama-cpp runs is the file μ's backbone is read from.

The format (version 2 and 3): ``GGUF``, the version, the tensor and metadata counts; the metadata
as (key, type, value); each tensor's name, dimensions (fastest first), type and offset; then the
tensors' data, from the next multiple of ``general.alignment`` (32 by default). Only F32 and F16
tensors are read: a quantized file would need llama.cpp's dequantisation kernels, and μ trains
in float32 anyway. A fault names the file and what in it is wrong.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import torch

from .faults import InvalidParams

MAGIC = b"GGUF"
VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
STRING, ARRAY = 8, 9
TENSOR_TYPES = {0: ("F32", torch.float32, 4), 1: ("F16", torch.float16, 2)}
"""The tensor types read here: ggml's type id → (name, dtype, bytes per element)."""
MAX_STRING = 1 << 24
"""A string longer than 16 MiB is a corrupt length, not a key or a token."""


class GgufFault(InvalidParams):
    """A GGUF file that cannot be read as one (``invalid_params``, naming the file and the fault)."""

    def __init__(self, path: str, message: str, param: str) -> None:
        super().__init__(f"{param}: {path}: {message}", {"path": param, "file": path})


@dataclass(frozen=True)
class GgufTensor:
    name: str
    shape: tuple[int, ...]
    """torch's order (slowest first): GGUF's dimensions reversed, so a Linear weight is [out, in]."""
    type: int
    offset: int
    """From the start of the file."""


@dataclass(frozen=True)
class GgufFile:
    path: str
    version: int
    metadata: dict[str, Any]
    tensors: dict[str, GgufTensor]

    def tensor(self, name: str) -> torch.Tensor:
        """The named tensor as float32 [torch's shape]."""
        info = self.tensors.get(name)
        if info is None:
            raise GgufFault(self.path, f"has no tensor {name!r}", self.param)
        if info.type not in TENSOR_TYPES:
            raise GgufFault(self.path, f"tensor {name!r} is of ggml type {info.type}; μ reads F32 and F16 tensors only (convert the model unquantized)", self.param)
        _, dtype, width = TENSOR_TYPES[info.type]
        count = 1
        for d in info.shape:
            count *= d
        with open(self.path, "rb") as f:
            f.seek(info.offset)
            data = f.read(count * width)
        if len(data) != count * width:
            raise GgufFault(self.path, f"tensor {name!r} runs past the end of the file", self.param)
        return torch.frombuffer(bytearray(data), dtype=dtype).reshape(info.shape).to(torch.float32)

    param: str = "params.model.gguf"


class Reader:
    def __init__(self, f: BinaryIO, path: str, param: str) -> None:
        self.f, self.path, self.param = f, path, param

    def fail(self, message: str) -> GgufFault:
        return GgufFault(self.path, message, self.param)

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        data = self.f.read(size)
        if len(data) != size:
            raise self.fail(f"ends early (at byte {self.f.tell()}), inside its header")
        return struct.unpack(fmt, data)[0]

    def string(self) -> str:
        length = self.unpack("<Q")
        if length > MAX_STRING:
            raise self.fail(f"has a string of {length} bytes at byte {self.f.tell() - 8}: not a GGUF file, or a corrupt one")
        data = self.f.read(length)
        if len(data) != length:
            raise self.fail(f"ends early (at byte {self.f.tell()}), inside a string")
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as error:
            raise self.fail(f"has a string that is not UTF-8 at byte {self.f.tell() - length + error.start}") from error

    def value(self, kind: int, key: str) -> Any:
        if kind in SCALARS:
            return self.unpack(SCALARS[kind])
        if kind == STRING:
            return self.string()
        if kind == ARRAY:
            item = self.unpack("<I")
            count = self.unpack("<Q")
            if item == ARRAY:
                raise self.fail(f"metadata {key!r} is an array of arrays, which μ does not read")
            return [self.value(item, key) for _ in range(count)]
        raise self.fail(f"metadata {key!r} has value type {kind}, not a GGUF type")


def read_gguf(path: str, param: str = "params.model.gguf") -> GgufFile:
    """The metadata and tensor table of the GGUF file at ``path`` (the data stays on disk until
    ``tensor`` reads it). ``param`` is the request field that named the file, for faults."""
    file = Path(path)
    if not file.is_file():
        raise GgufFault(path, "no such file", param)
    with open(file, "rb") as f:
        reader = Reader(f, path, param)
        if f.read(4) != MAGIC:
            raise reader.fail("is not a GGUF file (it does not start with 'GGUF')")
        version = reader.unpack("<I")
        if version not in VERSIONS:
            raise reader.fail(f"is GGUF version {version}; this reader reads versions {' and '.join(map(str, VERSIONS))}")
        n_tensors = reader.unpack("<Q")
        n_metadata = reader.unpack("<Q")
        metadata: dict[str, Any] = {}
        for _ in range(n_metadata):
            key = reader.string()
            metadata[key] = reader.value(reader.unpack("<I"), key)
        infos = []
        for _ in range(n_tensors):
            name = reader.string()
            dims = [reader.unpack("<Q") for _ in range(reader.unpack("<I"))]
            infos.append((name, tuple(reversed(dims)), reader.unpack("<I"), reader.unpack("<Q")))
        alignment = int(metadata.get("general.alignment", DEFAULT_ALIGNMENT))
        start = -(-f.tell() // alignment) * alignment
    tensors = {name: GgufTensor(name, shape, kind, start + offset) for name, shape, kind, offset in infos}
    return GgufFile(str(path), version, metadata, tensors, param)
