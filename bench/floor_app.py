"""Streamlit's floor for bench/first_visit.py: one page, one metric, nothing else."""

import streamlit as st

st.metric("Requests a day", "10,000")
