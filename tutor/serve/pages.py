"""The room's HTML: the page that runs an app (a learner's, or the facilitator's room view) and the
pages that say why a request was refused.

Our own pages, not textual-serve's template: no web fonts fetched (an offline room has no internet);
they load textual-serve's terminal script and font from its static folder, which the facilitator's
pages reach under /facilitator/static, where the facilitator's cookie goes (it is sent to
/facilitator alone, and the learners' token is no part of the facilitator's page).
"""

from __future__ import annotations

import html


def learner_page(title: str, ws: str, font_size: int) -> str:
    return _PAGE.format(title=html.escape(title), ws=html.escape(ws), font_size=font_size, home="/", static="/static",
                        starting="starting your session...", ended="Your session ended (your code is saved).")


def facilitator_page(title: str, ws: str, font_size: int) -> str:
    return _PAGE.format(title=html.escape(title), ws=html.escape(ws), font_size=font_size, home="/facilitator",
                        static="/facilitator/static", starting="opening the room view...",
                        ended="The room view ended (learners' apps go on).")


REFUSED_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>gpu-tutor</title></head>
<body style="font-family: monospace; background: #0c181f; color: #eee; padding: 3em">
<h1>This room needs its link</h1>
<p>Open the address your facilitator gave you: it ends in <code>?token=...</code>.</p>
</body></html>
"""

FACILITATOR_ONLY_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>gpu-tutor</title></head>
<body style="font-family: monospace; background: #0c181f; color: #eee; padding: 3em">
<h1>This page is the facilitator's</h1>
<p>It opens with the facilitator's own link, which <code>gpu-tutor serve</code> printed
(<code>/facilitator?token=...</code>). The room's link, the one learners have, does not open it.</p>
<p>Learners: open the address your facilitator gave you.</p>
</body></html>
"""

FACILITATOR_TOKEN_HERE_PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>gpu-tutor</title></head>
<body style="font-family: monospace; background: #0c181f; color: #eee; padding: 3em">
<h1>This is the facilitator's token</h1>
<p>It opens the room view, at <code>/facilitator?token=...</code>, and never a learner's app. To try the
app as a learner does, open the room's link (the one to hand out).</p>
</body></html>
"""

_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<title>{title}</title>
<link rel="stylesheet" href="{static}/css/xterm.css">
<script src="{static}/js/textual.js"></script>
<style>
@font-face {{ font-family: "Roboto Mono"; src: url("{static}/fonts/RobotoMono-VariableFont_wght.ttf"); }}
html, body {{ margin: 0; height: 100%; background: #0c181f; color: #e8e8e8; font-family: "Roboto Mono", monospace; }}
.note {{ position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
         flex-direction: column; z-index: 10; }}
.note.ended, body.-first-byte .note.starting {{ display: none; }}
body.-closed .note.ended {{ display: flex; background: #0c181f; }}
.textual-terminal {{ width: 100vw; height: 100vh; opacity: 0; }}
body.-first-byte .textual-terminal {{ opacity: 1; }}
a {{ color: #ac5af4; }}
</style>
</head>
<body>
<div class="note starting"><p>{title}</p><p>{starting}</p></div>
<div class="note ended"><p>{ended}</p><p id="back"></p><p><a href="{home}">Start again</a></p></div>
<div id="terminal" class="textual-terminal" data-session-websocket-url="{ws}" data-font-size="{font_size}"></div>
<script>
// When the session ends because the room went away (the facilitator restarted it), come back by
// ourselves as soon as it answers again. A room that stays up (this learner opened another tab) is
// left alone: two tabs must not take the app from each other.
(function () {{
  var watching = false;
  new MutationObserver(function () {{
    if (watching || !document.body.classList.contains("-closed")) return;
    watching = true;
    var down = false, tries = 0;
    function poll() {{
      fetch("{home}", {{cache: "no-store", credentials: "same-origin"}}).then(function () {{
        if (down) {{ location.reload(); return; }}
        if (++tries < 5) setTimeout(poll, 1500);
      }}).catch(function () {{
        down = true;
        document.getElementById("back").textContent = "The room is restarting: this page reconnects when it is back.";
        setTimeout(poll, 2000);
      }});
    }}
    setTimeout(poll, 500);
  }}).observe(document.body, {{attributes: true, attributeFilter: ["class"]}});
}})();
</script>
</body>
</html>
"""
