"""/explain: where each rank's step time goes, from the trace files a user chooses; its page and its API.

By default the page's scripts read the files in the browser and send nothing (static/trace_rules.js
mirrors the core's rules; tests/browser/test_explain_page.py checks they agree). On request, or
without JavaScript, the files are posted: ``POST /explain`` answers the page with the results,
``POST /api/v1/explain`` the JSON of ``dpscale explain --json``. An upload is a job, run apart from
the rest of the server (:mod:`dpscale.web.explain_jobs`).

What a posted upload found is kept a while (:class:`~dpscale.web.explain_jobs.Kept`, the result and
not the files) and the post answered with a redirect to ``/explain?lang=…&result=TOKEN``, whose
language link carries the token too: without JavaScript, the results survive a reload and the
language switch. ``GET /api/v1/explain?result=TOKEN`` answers the same result's JSON.
"""

from __future__ import annotations

import threading
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException

from dpscale._version import __version__
from dpscale.calculators.explain import levers_grid, ranks_grid, summary_rows
from dpscale.errors import InvalidInput
from dpscale.i18n import Lang, translation
from dpscale.predict.linked import traced_text
from dpscale.web.drawing import timeline_figure
from dpscale.web.explain_jobs import (
    EXPLAIN_JOBS,
    EXPLAIN_SECONDS,
    EXPLAIN_WAITING,
    KEPT_SECONDS,
    RESULT_PATTERN,
    Gone,
    Jobs,
    Kept,
    Refused,
    explained,
)
from dpscale.web.language import choose_lang
from dpscale.web.schemas import ErrorsOut
from dpscale.web.security import MAX_UPLOAD, UPLOAD_SECONDS
from dpscale.web.templating import environment

__all__ = ["LOCAL_MOST", "explain_router", "kept_results"]

LOCAL_MOST = 500_000_000  # characters of JSON per file that a browser reads (its longest string is about 2**29)
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
        "kept": _("Kept from the files chosen before; choose files to explain others."),
    }


def _view(found: Any, lang: Lang) -> dict[str, Any]:
    """What the results show of ``found``, in ``lang``: the summary's rows, the ranks' and levers' tables, the notes."""
    return {
        "rows": summary_rows(found, lang),
        "grid": ranks_grid(found, lang),
        "levers": levers_grid(found, lang) if found.levers else None,
        "notes": [note.localized(lang) for note in found.notes],
    }


def kept_results(request: Request) -> Kept:
    """The results this application keeps (a dependency: a test may hand the routes a store of its own)."""
    state = request.app.state
    with _KEPT_LOCK:
        if getattr(state, "explain_kept", None) is None:
            state.explain_kept = Kept()
        kept: Kept = state.explain_kept
    return kept


_KEPT_LOCK = threading.Lock()
_Results = Annotated[Kept, Depends(kept_results)]
_KEPT_MINUTES = int(KEPT_SECONDS // 60)
_NOT_KEPT = (
    "no results are kept under this token: the server keeps a result %(minutes)s minutes after it explains the files"
)
_PRIVATE = {"cache-control": "no-store"}  # one user's results, under an address of their own: no cache keeps them


def explain_router() -> APIRouter:
    """The page (GET and POST) and the JSON API of /explain."""
    router = APIRouter()
    jobs = Jobs()

    def page(
        request: Request,
        lang: str | None,
        found: Any = None,
        error: str | None = None,
        drawings: Any = (),
        status: int = 422,
        headers: dict[str, str] | None = None,
        token: str | None = None,
        notice: bool = False,
    ) -> HTMLResponse:
        """The page; with ``found``, its results, kept under ``token`` (None: too large to keep); ``notice``:
        the address named results no longer kept (``status`` then)."""
        chosen = choose_lang(request, lang or request.query_params.get("lang"))
        other: Lang = "en" if chosen == "fr" else "fr"
        slowest = next((i for i, r in enumerate(found.ranks) if r.rank == found.slowest_rank), 0) if found else 0
        traced = traced_text(found) if found else None  # the link to /predict: its figures, as text
        kept = {"minutes": _KEPT_MINUTES, "token": token}
        switch = f"?lang={other}" + (f"&result={token}" if token else "")  # the same results in the other language
        variables = {
            "lang": chosen,
            "other_lang": other,
            "calc": {"name": "explain"},
            "slot": lambda name: switch,
            "version": __version__,
            "words": _words(chosen),
            "local_most": LOCAL_MOST,
            "max_upload": MAX_UPLOAD,
            "max_upload_mib": MAX_UPLOAD >> 20,
            "upload_seconds": int(UPLOAD_SECONDS),
            "found": found,
            "traced": traced,
            "kept": kept,
            "notice": notice,
            "error": error,
            "view": _view(found, chosen) if found else None,
            # Drawn here for a browser without JavaScript; the script draws its own in its place.
            "timeline": timeline_figure(drawings, [r.rank for r in found.ranks], slowest, chosen) if found else "",
            "drawing": {
                "slowest": slowest,
                "ranks": [{"rank": r.rank, **d.to_dict()} for r, d in zip(found.ranks, drawings, strict=True)],
            }
            if found
            else None,
            # The same results in the other language, for the page's script to keep (see explain.js).
            "other_results": environment(other)
            .get_template("_explain_parts.html")
            .module.results(  # type: ignore[attr-defined]
                _view(found, other), "", traced, other, kept
            )
            if found
            else "",
        }
        text = environment(chosen).get_template("explain.html").render(variables)
        return HTMLResponse(
            text,
            status_code=status if error or notice else 200,
            headers={"content-language": chosen, "vary": "accept-language", **(headers or {})},
        )

    @router.get("/explain", response_class=HTMLResponse, include_in_schema=False, name="explain")
    def explain_page(
        request: Request, kept: _Results, lang: str | None = None, result: str | None = None
    ) -> HTMLResponse:
        if result is None:
            return page(request, lang)
        if not Kept.well_formed(result):
            return page(request, lang, notice=True, status=422)
        again = kept.get(result)
        if again is None:  # never kept, or no longer
            return page(request, lang, notice=True, status=404)
        found, drawings = again
        return page(request, lang, found=found, drawings=drawings, token=result, headers=_PRIVATE)

    @router.post("/explain", response_class=HTMLResponse, include_in_schema=False)
    async def explain_posted(request: Request, kept: _Results, lang: str | None = None) -> Response:
        chosen = choose_lang(request, lang)
        try:
            found, drawings = await explained(request, jobs)
        except InvalidInput as exc:
            return page(request, lang, error=exc.localized(chosen))
        except Refused as exc:
            return page(request, lang, error=exc.localized(chosen), status=503, headers=exc.headers)
        except Gone:
            return HTMLResponse("", status_code=499)  # nobody reads it
        except HTTPException as exc:  # a body that is not a form of files
            said = translation(chosen).gettext("The request does not hold files as the form sends them (%(reason)s).")
            return page(request, lang, error=said % {"reason": exc.detail})
        token = await run_in_threadpool(kept.keep, found, drawings)
        if token is None:  # too large to keep: shown once, here
            return page(request, lang, found=found, drawings=drawings, headers=_PRIVATE)
        # Redirected: a reload asks for the results again, not for the files, and the address names them.
        return RedirectResponse(f"/explain?lang={chosen}&result={token}", status_code=303, headers=_PRIVATE)

    @router.get(
        "/api/v1/explain",
        responses={
            404: {"model": ErrorsOut, "description": f"No result kept under this token (kept {_KEPT_MINUTES} min)"},
            422: {"model": ErrorsOut, "description": "A token not written as the page writes them"},
        },
        summary=f"A result the page explained, kept {_KEPT_MINUTES} minutes under the token its address carries",
    )
    def api_kept(
        kept: _Results,
        result: Annotated[
            str,
            Query(
                min_length=32,
                max_length=32,
                pattern=f"^{RESULT_PATTERN}$",
                description="the token of /explain's address (result=…) after its files were posted",
            ),
        ],
    ) -> JSONResponse:
        again = kept.get(result)
        if again is None:
            body = {"errors": [{"field": "result", "message": _NOT_KEPT % {"minutes": _KEPT_MINUTES}}]}
            return JSONResponse(body, status_code=404, headers=_PRIVATE)
        return JSONResponse(again[0].to_dict(), headers=_PRIVATE)

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
            503: {
                "model": ErrorsOut,
                "description": f"{EXPLAIN_JOBS} uploads being explained and {EXPLAIN_WAITING} more waiting, or "
                f"files not explained within {EXPLAIN_SECONDS:g} s; with Retry-After",
            },
        },
        summary="Where each rank's step time goes, from its profiler traces (multipart files named trace)",
        openapi_extra={"requestBody": _TRACES_BODY},
    )
    async def api_explain(request: Request) -> JSONResponse:
        try:
            found, _ = await explained(request, jobs)  # the app answers a dpscale error as a 422 naming the field
        except Refused as exc:
            body = {"errors": [{"field": "trace", "message": exc.localized("en")}]}
            return JSONResponse(body, status_code=503, headers=exc.headers)
        except Gone:
            return JSONResponse({}, status_code=499)  # nobody reads it
        return JSONResponse(found.to_dict())

    return router
