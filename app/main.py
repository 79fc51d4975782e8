"""flashplan web app: pre-sales sizing of flash storage.

Pages: Size (one configuration, with its error bars, cost and report), Compare (two to
four side by side with price-performance), What-if (sweep one or two parameters),
Plan (the cheapest configuration that meets requirements), Consolidation (several
workloads on one configuration, per workload), Load over time (a profile replayed, latency over
time against an SLO, load growth until it breaks), Calibration (how close the
model is to measurements) and Scenario library (save, load, import, export).

Start it with ``make run`` or ``flashplan app``.
"""

from __future__ import annotations

import streamlit as st

from app import runner
from app.views.common import PAGE_SCRIPTS

st.set_page_config(page_title="flashplan", page_icon=":material/storage:", layout="wide")

SIZE_ADDRESSES = ("sizing", "size")
PAGES = [
    st.Page(PAGE_SCRIPTS["size"], title="Size", icon=":material/speed:", url_path="", default=True),
    st.Page(PAGE_SCRIPTS["compare"], title="Compare", icon=":material/compare_arrows:", url_path="compare"),
    st.Page(PAGE_SCRIPTS["what-if"], title="What-if", icon=":material/ssid_chart:", url_path="what-if"),
    st.Page(PAGE_SCRIPTS["plan"], title="Plan", icon=":material/checklist:", url_path="plan"),
    st.Page(PAGE_SCRIPTS["consolidation"], title="Consolidation", icon=":material/stacked_bar_chart:", url_path="consolidation"),
    st.Page(PAGE_SCRIPTS["load-over-time"], title="Load over time", icon=":material/timeline:", url_path="load-over-time"),
    st.Page(PAGE_SCRIPTS["calibration"], title="Calibration", icon=":material/target:", url_path="calibration"),
    st.Page(PAGE_SCRIPTS["library"], title="Scenario library", icon=":material/folder_open:", url_path="library"),
    # the default page is served at "/" (a url_path given to it is reserved but never served), so /sizing and /size
    # are pages of their own: the same script, not listed twice
    *(st.Page(PAGE_SCRIPTS["size"], title="Size", icon=":material/speed:", url_path=path, visibility="hidden")
      for path in SIZE_ADDRESSES),
]

page = st.navigation(PAGES)
if __name__ == "__main__":  # not when a spawned worker re-imports this script as __mp_main__
    runner.warm_pool()
with st.sidebar:
    st.caption("flashplan: discrete-event simulation of the flash I/O path, with a queueing-model fast path. "
               "Prices are catalog list-price assumptions.")
try:
    page.run()
except Exception as exc:  # never a traceback in front of a customer; Streamlit's stop/rerun signals are not Exceptions
    st.error(f"Something went wrong on this page: {type(exc).__name__}: {exc}. Your inputs are kept; "
             "change them or reload the page.", icon=":material/error:")
