"""Dataset records: where each dataset's files come from, how to check them, and their terms.

Every dataset that reads files declares one :class:`DatasetRecord` as the ``record`` class
variable of its config class (``record: ClassVar[DatasetRecord] = RECORD``). The records are
collected from the ``zoo.datasets`` entry points, so a third-party dataset gets ``zoo data``
support by declaring its record the same way.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import registry
from ..errors import InputError
from ..suggest import did_you_mean


@dataclass(frozen=True)
class RemoteFile:
    """One source file: cache/mirror name, official URLs (tried in order) and its checksum.

    ``sha256``/``size`` of ``None`` mean "not known" (the file is then accepted unverified and
    ``zoo data info`` says so). ``note`` states where the checksum comes from. ``member`` is set
    when the URLs point at a zip/tar archive holding the file: the path of the file inside it
    (matched on its trailing path components, so a re-packed archive with an extra top folder
    still works); ``sha256``/``size`` then describe the extracted file. ``part`` names the
    part of a collection the file belongs to (a UEA dataset), so that ``zoo data fetch NAME
    PART`` fetches that part alone. ``partial_in_mirror`` is a sentence saying what a mirror's
    copy of the file lacks (``None``: complete); a dataset loaded from such a copy sets
    :attr:`zoo.series.DataBundle.partial` to it.
    """

    name: str
    urls: tuple[str, ...] | list[str]
    sha256: str | None = None
    size: int | None = None
    note: str = ""
    member: str | None = None
    part: str | None = None
    partial_in_mirror: str | None = None


@dataclass(frozen=True)
class DatasetRecord:
    """A dataset's provenance: files, licence, citation and the folder it has in a mirror.

    With ``alternatives`` the files are alternative sources of the dataset, best first (the full
    archive, then smaller ones): the dataset needs one of them, not all.
    """

    name: str
    title: str
    files: tuple[RemoteFile, ...]
    licence: str
    citation: str
    homepage: str
    mirror_subdir: str
    notes: str = ""
    alternatives: bool = False
    _by_name: dict[str, RemoteFile] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_name", {f.name: f for f in self.files})

    def file(self, name: str) -> RemoteFile:
        """The file called ``name``; an :class:`InputError` names the known ones otherwise."""
        if name not in self._by_name:
            raise InputError(f"dataset '{self.name}' has no file '{name}'"
                             f"{did_you_mean(name, self._by_name)}; files: "
                             f"{', '.join(self._by_name)}")
        return self._by_name[name]

    @property
    def parts(self) -> tuple[str, ...]:
        """The parts its files belong to (``RemoteFile.part``), in order; empty if none."""
        return tuple(dict.fromkeys(f.part for f in self.files if f.part))

    @property
    def partial_in_mirror(self) -> bool:
        """Whether a mirror's copy of some file is incomplete."""
        return any(f.partial_in_mirror for f in self.files)


def all_records() -> dict[str, DatasetRecord]:
    """Records of every loadable dataset component, by record name."""
    found = {}
    for config in registry.loadable("datasets").values():
        rec = getattr(config, "record", None)
        if isinstance(rec, DatasetRecord):
            found[rec.name] = rec
    return dict(sorted(found.items()))


def record(name: str) -> DatasetRecord:
    """The record called ``name``; unknown names raise an :class:`InputError` with a suggestion."""
    known = all_records()
    if name not in known:
        raise InputError(f"no dataset record named '{name}'{did_you_mean(name, known)}; "
                         f"datasets with files: {', '.join(known) or '(none)'}")
    return known[name]
