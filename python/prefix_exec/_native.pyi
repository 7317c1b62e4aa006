"""Type hints of the extension module (python/src/lib.rs). Private: use prefix_exec's API."""

from os import PathLike
from typing import List, Optional, Sequence, Tuple, Union

__version__: str

class PrefixExecError(ValueError):
    """An error of prefix-exec, with the command line's message."""

class NativeReport:
    @property
    def json(self) -> str: ...
    @property
    def diagnostics(self) -> List[str]: ...
    def text(self, decimals: int = 2, layout: Optional[str] = None) -> str: ...
    def csv(self, decimals: int = 2, layout: Optional[str] = None) -> str: ...
    def latex(
        self,
        decimals: int = 2,
        intervals: bool = True,
        layout: Optional[str] = None,
        rank: str = "final_success",
    ) -> str: ...

_Input = Union[str, "PathLike[str]", Tuple[str, bytes]]

def run_cli(argv: Sequence[str]) -> int: ...
def score(
    inputs: Sequence[_Input], flags: Sequence[str], threads: Optional[int] = None
) -> NativeReport: ...
def convert(inputs: Sequence[_Input], flags: Sequence[str]) -> Tuple[str, List[str]]: ...
def search(
    inputs: Sequence[_Input], flags: Sequence[str], threads: Optional[int] = None
) -> Tuple[str, List[str]]: ...
