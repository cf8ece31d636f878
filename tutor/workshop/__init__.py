"""The facilitator's side of gpu-tutor: running one room of learners and reading back how it went.

A facilitator writes a workshop file (config) that fixes the puzzles, policies and backend every
learner gets; each learner may give a name (learner) and exports their progress as one file
(export); the facilitator reads a class's worth of those files into tables and a CSV (report); the
`workshop`, `export` and `report` commands and the `--workshop` option live in cli. They are one
package because they are one feature, apart from the learner's own app and commands, which only
call in. The room's live picture (live, misconceptions), its code policy (room_code) and the message
to the room (room_message) are here too; their screen is the app's (tutor.app.room_app), which only
`gpu-tutor room` loads. Nothing here imports numba or litellm, nor textual but for that one command,
and this file imports nothing, so callers name the module they need (tutor.workshop.config, ...).
"""
