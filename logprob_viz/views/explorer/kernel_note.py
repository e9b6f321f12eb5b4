"""The explorer's "no kernel" note: a small anywidget shown only when no kernel answers it.

A fixed line of text cannot know whether a kernel is behind it, so the note asks: on render its
frontend (js/explorer_host/note.js) sends a ping, and this object answers. A live kernel answers
at once and nothing is shown; a saved copy reopened without a kernel (or with a new kernel that
never ran the cell) gets no answer, and the note then says why the buttons do nothing. A kernel
busy with another cell answers late (comm messages wait for the cell): the note shows meanwhile,
asks again, and hides at the first answer; its words say both cases.
"""

from __future__ import annotations

import traitlets as t

from ..bundled import Bundled

__all__ = ["KernelNote", "NO_KERNEL_NOTE"]

NO_KERNEL_NOTE = (
    "No kernel answers this explorer (none is running it, or it is busy with another cell): Generate, "
    "Next token, Stop and Branch need it; hovering and pinning tokens work. Without a kernel, run the cell again."
)


class KernelNote(Bundled, bundle="kernel_note"):
    """`text`, shown by the frontend only when its ping gets no answer from the kernel."""

    text = t.Unicode(NO_KERNEL_NOTE).tag(sync=True)

    def __init__(self, text: str = NO_KERNEL_NOTE) -> None:
        super().__init__(text=text)
        self.on_msg(self._answer)

    def _answer(self, _widget, content, _buffers) -> None:
        if isinstance(content, dict) and content.get("type") == "ping":
            self.send({"type": "pong"})
