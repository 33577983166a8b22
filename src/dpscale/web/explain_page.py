"""/explain: where each rank's step time goes, from the trace files a user chooses.

By default the page's scripts read the files in the browser and send nothing (static/trace_rules.js
mirrors the core's rules; tests/browser/test_explain_page.py checks they agree). On request, or
without JavaScript, the files are posted: ``POST /explain`` answers the page with the results,
``POST /api/v1/explain`` the JSON of ``dpscale explain --json``. The guard (security.py) lets
these two routes take up to :data:`~dpscale.web.security.MAX_UPLOAD` bytes, streamed: Starlette's
form parser spools each file to disk as it arrives, and each is copied to a temporary file, read
by the core and deleted before the next, so that neither the request nor its files are ever held
in memory whole.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path, PurePath
from typing import Any, BinaryIO

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from dpscale import _files
from dpscale._version import __version__
from dpscale.errors import N_, InvalidInput
from dpscale.i18n import Lang, translation
from dpscale.report import explanation_grid, explanation_levers, explanation_rows
from dpscale.web.language import choose_lang
from dpscale.web.schemas import ErrorsOut
from dpscale.web.security import MAX_UPLOAD, UPLOAD_SECONDS
from dpscale.web.templating import environment

__all__ = ["LOCAL_MOST", "explain_router", "explain_uploads"]

LOCAL_MOST = 500_000_000  # characters of JSON per file that a browser reads (its longest string is about 2**29)
_COPY = 1 << 20  # bytes copied at a time from an upload to the file the core reads
NO_FILES = N_("one or more trace files (Chrome trace JSON from torch.profiler, plain or gzipped)")

Upload = tuple[str, BinaryIO]
_TRACES_BODY = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "properties": {
                    "trace": {
                        "type": "array",
                        "items": {"type": "string", "format": "binary"},
                        "description": "one profiler trace per rank (Chrome trace JSON, plain or gzipped)",
                    }
                },
                "required": ["trace"],
            }
        }
    },
}


def explain_uploads(uploads: list[Upload]) -> tuple[Any, list[Any]]:
    """The core's :class:`~dpscale.explain.Explanation` of uploaded traces, each called by its own name,
    and the last step of each of its ranks as a timeline draws it (in the explanation's order).
    """
    from dpscale.explain import explain_timelines, read_trace
    from dpscale.explain.timeline import step_drawing

    if not uploads:
        raise InvalidInput("trace", "", NO_FILES)
    timelines = {}
    with tempfile.TemporaryDirectory(prefix="dpscale-explain-") as folder:
        for number, (name, source) in enumerate(uploads):
            copy = Path(folder) / str(number)
            with copy.open("wb") as out:
                shutil.copyfileobj(source, out, _COPY)
            timelines[name] = read_trace(copy, name=name)
            copy.unlink()  # one copy on disk at a time
    found = explain_timelines(list(timelines.values()))
    return found, [step_drawing(timelines[rank.file]) for rank in found.ranks]


def _named(names: list[str]) -> list[str]:
    """Each upload's name, made unique (``trace.json (2)``) so that results and errors tell them apart."""
    taken: set[str] = set()
    unique = []
    for name in names:
        shown, count = name, 1
        while shown in taken:  # a, a, "a (2)": a, a (2), a (2) (2)… never twice the same
            count += 1
            shown = f"{name} ({count})"
        taken.add(shown)
        unique.append(shown)
    return unique


async def _explained(request: Request) -> tuple[Any, list[Any]]:
    """:func:`explain_uploads` of the files posted as ``trace``, each by the name its user gave it.

    The form's files (spooled to disk by Starlette as they arrive) are closed once read; an empty
    file input (no name, no bytes) is no file.
    """
    async with request.form(max_files=_files.MAX_TRACE_FILES, max_fields=16) as form:
        files = [i for i in form.getlist("trace") if isinstance(i, UploadFile) and (i.filename or i.size)]
        names = _named([PurePath(item.filename or "trace").name or "trace" for item in files])
        return await run_in_threadpool(explain_uploads, [(n, f.file) for n, f in zip(names, files, strict=True)])


def _words(lang: Lang) -> dict[str, str]:
    """What the page's script writes, in the page's language (the same catalog messages as the CLI's table)."""
    _ = translation(lang).gettext
    return {
        "rank": _("Rank"),
        "steps": _("Steps"),
        "step": _("Step"),
        "compute": _("Compute"),
        "exposed": _("Exposed comm."),
        "other": _("Other"),
        "wait": _("Wait"),
        "overlap": _("Overlap"),
        "caption": _("Mean per step, by rank"),
        "slowest": _("Slowest rank"),
        "step_time": _("Step time"),
        "efficiency": _("Efficiency the run implies (E)"),
        "single": _("Step alone on one device (compute + other)"),
        "communication": _("Communication in flight, slowest rank"),
        "straggler": _("Wait for the slowest rank, mean over ranks"),
        "cv": _("Step-time variation (CV)"),
        "bandwidth": _("Achieved bandwidth (algbw)"),
        "lever": _("Lever"),
        "saves": _("Saves per step"),
        "speedup": _("Speed-up"),
        "levers": _("Levers, from the measured terms"),
        "balance": _("balance the work across ranks: the others wait for the slowest"),
        "lever_communication": _(
            "hide or speed up the communication no compute hides (overlap, bandwidth, fewer bytes)"
        ),
        "host": _("cut the time no operator runs: input pipeline, host overhead, idle"),
        "unnumbered": _("The traces do not say their ranks: ranks are numbered in the files' order."),
        "partial": _("Read %(read)s of the run's %(world)s ranks."),
        "skipped": _("%(file)s: %(count)s events could not be read and were left out."),
        "timeline": _("Step %(step)s of each rank, from its start"),
        "timeline_alt": _(
            "Timeline of step %(step)s: for each rank, when it computed, when it waited on communication "
            "no compute hid, and the other time; the table gives the same as numbers."
        ),
        "exposed_long": _("Exposed communication"),
        "other_long": _("Other: idle, input, host"),
        "rank_n": _("rank %(rank)s"),
        "ms": _("ms"),
        "reading": _("Reading %(file)s…"),
        "not_trace": _("%(file)s is not a PyTorch profiler trace (Chrome trace JSON, plain or gzipped): %(reason)s."),
        "not_json": _("not JSON, or JSON cut short"),
        "no_events": _("JSON without traceEvents"),
        "bad_gzip": _("a gzip file that is damaged or cut short"),
        "too_long": _("more than %(most)s characters of JSON, too many for a browser; tick “Analyse on the server”"),
        "no_steps": _(
            "%(file)s has no profiler steps (ProfilerStep#N: a torch.profiler schedule and prof.step() each step)."
        ),
        "same_rank": _("%(file)s is rank %(rank)s, as %(other)s is: choose one trace per rank."),
        "steps_differ": _(
            "%(file)s has other profiler steps than %(other)s: every rank's trace must hold the same steps."
        ),
        "none": _("Choose one or more trace files."),
        "too_large": _(
            "These files weigh %(size)s MiB; the server takes at most %(mib)s MiB in all: "
            "untick the box to read them in your browser, or gzip them."
        ),
        "no_gzip": _("This browser cannot open gzipped files: tick “Analyse on the server”."),
    }


def explain_router() -> APIRouter:
    """The page (GET and POST) and the JSON API of /explain."""
    router = APIRouter()

    def page(
        request: Request, lang: str | None, found: Any = None, error: str | None = None, drawings: Any = ()
    ) -> HTMLResponse:
        chosen = choose_lang(request, lang or request.query_params.get("lang"))
        other = "en" if chosen == "fr" else "fr"
        variables = {
            "lang": chosen,
            "other_lang": other,
            "calc": {"name": "explain"},
            "slot": lambda name: f"?lang={other}",
            "version": __version__,
            "words": _words(chosen),
            "local_most": LOCAL_MOST,
            "max_upload": MAX_UPLOAD,
            "max_upload_mib": MAX_UPLOAD >> 20,
            "upload_seconds": int(UPLOAD_SECONDS),
            "found": found,
            "error": error,
            "rows": explanation_rows(found, chosen) if found else [],
            "grid": explanation_grid(found, chosen) if found else None,
            "levers": explanation_levers(found, chosen) if found and found.levers else None,
            "notes": [note.localized(chosen) for note in found.notes] if found else [],
            "drawing": {
                "slowest": next((i for i, r in enumerate(found.ranks) if r.rank == found.slowest_rank), 0),
                "ranks": [{"rank": r.rank, **d.to_dict()} for r, d in zip(found.ranks, drawings, strict=True)],
            }
            if found
            else None,
        }
        text = environment(chosen).get_template("explain.html").render(variables)
        status = 422 if error else 200
        return HTMLResponse(text, status_code=status, headers={"content-language": chosen, "vary": "accept-language"})

    @router.get("/explain", response_class=HTMLResponse, include_in_schema=False, name="explain")
    def explain_page(request: Request, lang: str | None = None) -> HTMLResponse:
        return page(request, lang)

    @router.post("/explain", response_class=HTMLResponse, include_in_schema=False)
    async def explain_posted(request: Request, lang: str | None = None) -> HTMLResponse:
        chosen = choose_lang(request, lang)
        try:
            found, drawings = await _explained(request)
        except InvalidInput as exc:
            return page(request, lang, error=exc.localized(chosen))
        except HTTPException as exc:  # a body that is not a form of files
            said = translation(chosen).gettext("The request does not hold files as the form sends them (%(reason)s).")
            return page(request, lang, error=said % {"reason": exc.detail})
        return page(request, lang, found=found, drawings=drawings)

    @router.post(
        "/api/v1/explain",
        responses={
            422: {
                "model": ErrorsOut,
                "description": "A file that is not a trace, has no profiler steps, or is cut short",
            },
            400: {"model": ErrorsOut, "description": "A body that is not multipart/form-data"},
            413: {"model": ErrorsOut, "description": f"Files over {MAX_UPLOAD} bytes ({MAX_UPLOAD >> 20} MiB) in all"},
            408: {"model": ErrorsOut, "description": f"Files that do not arrive within {UPLOAD_SECONDS:g} s"},
        },
        summary="Where each rank's step time goes, from its profiler traces (multipart files named trace)",
        openapi_extra={"requestBody": _TRACES_BODY},
    )
    async def api_explain(request: Request) -> JSONResponse:
        found, _ = await _explained(request)  # the app answers a dpscale error as a 422 naming the field
        return JSONResponse(found.to_dict())

    return router
