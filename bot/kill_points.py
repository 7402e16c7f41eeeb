"""Named moments at which the kill tests stop the bot with SIGKILL (``BARB_KILL_AT``).

Most stages of a question can be caught from outside (a request reaching a fake server, a
row in the database); a few windows last a millisecond between two steps. A test names one
in ``BotSettings.kill_at`` and the bot kills itself there, as an OOM kill would: no handler
runs, nothing is flushed. Unset, as in production, each point costs one comparison.
"""

from __future__ import annotations

import os
import signal
from typing import Literal

#: ``update_stored``: an update is stored and Telegram not yet told (the next getUpdates);
#: ``question_received``: a question's handler runs, before the question is recorded in flight.
KillPoint = Literal["update_stored", "question_received"]


def reached(point: KillPoint, armed: KillPoint | None) -> None:
    """Die here, now, if the settings armed this point."""
    if point == armed:
        os.kill(os.getpid(), signal.SIGKILL)
