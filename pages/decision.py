"""Decision: self-host or API, for the traffic in the link — the verdict, what would flip it, and the memo."""


import altair as alt
import streamlit as st

from calc import memo as dm
from calc import notes, parse, planner, tables, with_change, words
from calc.accuracy import band_text
from calc.decision import NO_RENT_WORD, OTHER_WAYS
from pages import _ui as ui

s, r = ui.page()
ev = ui.evaluation()
d = ev.decision
# Requests longer than the model's trained context: no option serves them, which several sections below say.
refusal = notes.context_refusal(s)


sentence = dm.verdict_sentence(d)
if ui.rejected_keys():  # the verdict rests on defaults where the link's values were refused: say which
    sentence += (" These figures use the default for " + ", ".join(f"`{k}`" for k in ui.rejected_keys())
                 + ": the value given was not accepted (see above).")
if d.verdict == "does not fit":
    st.error(f"**{dm.headline(d)}.** {sentence}", icon=":material/block:")
elif r["recommendation"] == NO_RENT_WORD:
    st.warning(f"**{dm.headline(d)}.** {sentence}", icon=":material/payments:")
else:
    st.info(f"**{dm.headline(d)}.** {sentence}", icon=":material/balance:")
rent_quote = dm.rent_quote_sentence(d)
if rent_quote:  # the verdict rests on a cheap rent: said where it is seen, not only inside the verdict
    st.warning(f"**{dm.rent_quote_title(d)}.** {rent_quote}", icon=":material/sell:")
callout = dm.cheaper_api_callout(d)
if callout is not None:  # the price list's cheapest row for the model, up front, with the link that compares it
    text, api_id = callout
    other = parse(with_change(s.to_params(), "api", api_id)).scenario.to_query()
    st.warning(f"{text} [Compare with that row]({ui.base_url()}/decision?{other})", icon=":material/sell:")

fixed = [k for k in ("ctx", "duty") if k not in s.follows_traffic]
st.caption(f"This page sizes for the traffic: each request holds {ui.evaluation().decision.cap.n:,} tokens (prompt + output) in "
           f"cache and the duty cycle follows from {words.per_day(s.req_day)} and the peak factor. "
           + ("The Fit, Speed and Cost pages follow the same traffic (Context and Duty on auto)." if not fixed else
              f"The Fit, Speed and Cost pages use the link's {' and '.join(fixed)} instead, a what-if they say at "
              "their top; clear the input (auto) to follow the traffic."))

c1, c2, c3, c4 = st.columns(4)
stand_in = dm.stand_in_clause(s)
api_help = (f"{words.money(d.api_usd_month)}: {d.api_in_price:g} USD per 1M prompt tokens and "
            f"{d.api_out_price:g} per 1M output tokens{stand_in}, the link's API row."
            + ("" if d.cheaper_api is None else
               f" The catalogue's cheaper row for {dm.cheaper_row_model(d)}, {d.cheaper_api[0]}, would bill "
               f"{words.money(d.cheaper_api[1])} a month."))
if dm.cheaper_api_wins(d):
    # The verdict rests on the cheaper row: its bill is the figure, the link's row's under it.
    c1.metric("API per month, cheapest row", words.money_short(d.cheaper_api[1]),
              delta=f"{words.money_short(d.api_usd_month)} at the link's row", delta_color="off", delta_arrow="off",
              help=api_help)
else:
    c1.metric("API per month" + (" (list price; it refuses them)" if refusal else
                                 " (stand-in price)" if stand_in else ""), words.money_short(d.api_usd_month),
              # The catalogue's cheaper row, which does not change the verdict, under the link's row's bill.
              delta=None if d.cheaper_api is None else f"{words.money_short(d.cheaper_api[1])} at the cheaper row",
              delta_color="off", delta_arrow="off", help=api_help)
# Under autoscaling the verdict's bill is still the all-day fleet's (SPEC section 6); the autoscaled rent is an option
# below: the label says which this is.
own_usd = r.get("own_usd_month")
if not d.priced and d.fits and own_usd is not None:
    # No rent for the card, but a purchase price: buying is the self-hosting bill there is.
    c2.metric("Buying the cards, per month", words.money_short(own_usd), delta="no rent set: renting not priced",
              delta_color="off", delta_arrow="off",
              help=f"{words.money(own_usd)}: the replicas' cards and servers paid off over {s.years:g} years at "
                   f"{s.wacc:.0%} a year, their power and the upkeep ({words.money(r['own_capex_usd'])} to "
                   "buy). Enter a rent per card-hour (sidebar, Money) to price renting too.")
else:
    c2.metric("Self-hosting, all-day fleet" if s.autoscale and s.profile else "Self-hosting per month",
              words.money_short(d.self_host_usd_month),
              delta=None if d.self_host_low is None else
              (f"{words.money_short(d.self_host_low)} at both ends of the band" if d.self_host_low == d.self_host_high
               else f"{words.money_short(d.self_host_low).removesuffix(' USD')}–{words.money_short(d.self_host_high)}")
              + (" · marginal" if d.marginal else ""),
              delta_color="off", delta_arrow="off",
              help=f"{words.money(d.self_host_usd_month)}: rent of every replica, busy or not, plus upkeep. The range is "
                   "the bill at the "
                   + (f"capacity error of set-ups like this one ({d.capacity_band_region_rows:,} published rows, "
                      "further off than the engine's rows as a whole)" if d.capacity_band_region_rows else
                      "engine's capacity error")
                   + ", each source of published measurements predicted by a fit without it"
                   + ("" if d.capacity_measured else "; no published row covers this set-up, so the widest band")
                   + "." + ("" if d.self_host_kept_out is None else
                            f" At the error of the published rows kept out of the fit ({d.kept_out_pct:.0f} % too fast), "
                            f"{words.money(d.self_host_kept_out)}.")
                   + (" This is the fleet sized for the busiest hour running all day, the verdict's bill; the "
                            "autoscaled fleet's rent is in the options table below." if s.autoscale and s.profile else ""))
c3.metric("Cards for the busiest hour", "—" if d.replicas is None else words.cell(d.capacity_cards),
          delta=words.card_name(s), delta_color="off", delta_arrow="off",
          help=None if d.replicas is None else words.first_upper(words.hardware_text(s, d.replicas)) + ".")
# Self-hosting's bill is a staircase (one more replica at a time), so it may first break even, fall back behind the
# API at the next step, and stay cheaper only above a second volume: both are shown where they differ.
FLIP_HELP = ("Requests a day at which self-hosting first costs less than the API; where two figures are shown, the "
             "bills cross back and forth between them (each replica added is a step) and self-hosting stays cheaper "
             "above the second.")
first, stays = (None if v is None else words.sig(v, 3) for v in (d.break_even, d.stays_cheaper))
flip = ("—" if not d.fits or not d.priced else "never" if first is None else
        first if stays in (None, first) else f"{first} to {stays}")
# The value holds the first crossing; a second one, where the bills cross back, goes under it (a narrow column).
short_flip = "—" if not d.fits or not d.priced or refusal else "never" if first is None else words.short(d.break_even)
flip_after = None if first is None or stays in (None, first) else f"cheaper for good above {words.short(d.stays_cheaper)}"
flip_help = FLIP_HELP + ("" if flip == short_flip else f" Here: {flip} requests a day.")
# The same volume at the two ends of the capacity band: a break-even on a thin margin moves far with it.
band_flip = None
if d.fits and d.priced and d.capacity_band_pct is not None:
    ends = [d.report["break_even_req_day_low"], d.report["break_even_req_day_high"]]
    lo, hi = ("never" if v is None else words.short(v) for v in ends)
    band_flip = "band: " + (f"{lo} at both ends" if lo == hi else words.span(lo, hi))
    flip_help += (f" The band: the break-even volume with the replicas' capacity at the ends of the capacity error "
                  f"({band_text(d.capacity_band_pct)}); where it reaches 'never', the margin is too thin to rely on.")
# Where the answer rests on the catalogue's cheaper row, the break-even volume is still against the link's row: said.
c4.metric("Break-even vs the link's API row" if dm.cheaper_api_wins(d) else "Break-even, requests a day", short_flip,
          delta=band_flip or flip_after, delta_color="off", delta_arrow="off",
          help=flip_help)
ui.details()  # the first draw of a session ends here: the verdict and its four figures

monthly = dm.monthly_table(d)
ui.dataframe(monthly,
             column_config={"option": "Option", "usd_month": st.column_config.NumberColumn(
                 "USD per month", format=ui.usd_format(monthly["usd_month"])),
                            "how": "How it adds up"})
ui.download_csv(monthly, "decision-monthly", "Download this table (CSV)")

# ---------------------------------------------------------------- chart
st.subheader("Monthly cost by daily volume")
y_type = st.radio("Cost axis", ["log", "linear"], horizontal=True, key="_y_scale",
                  help="A log axis shows the small and the large volumes together.")
curve = tables.cost_curve(d)
if y_type == "log":
    curve = curve[curve["usd_month"] > 0]
marks = tables.chart_marks(d)
x = alt.X("req_day:Q", scale=alt.Scale(type="log", nice=False), title="requests per day (log scale)",
          axis=alt.Axis(values=[10.0 ** k for k in range(0, 11)], labelExpr=ui.SI_LABEL_PLAIN, labelOverlap=True))
y = alt.Y("usd_month:Q", scale=alt.Scale(type=y_type), title=f"USD per month ({y_type} scale)",
          axis=alt.Axis(values=[10.0 ** k for k in range(-3, 13)] if y_type == "log" else alt.Undefined,
                        labelExpr=ui.SI_LABEL_PLAIN))
# The legend lists the lines drawn (an unrented card draws no renting line; a card without a price no buying one).
LINE_COLORS = {"API": "#f58518", tables.CHEAPEST_API: "#f5b87a", "Self-hosting": "#4c78a8",
               "Buying the cards": "#54a24b"}
drawn = [o for o in LINE_COLORS if (curve["option"] == o).any()]
colors = alt.Color("option:N", scale=alt.Scale(domain=drawn, range=[LINE_COLORS[o] for o in drawn]),
                   legend=alt.Legend(title=None, orient="bottom", columns=4, labelLimit=0))
tip = [alt.Tooltip("req_day:Q", format=",.0f", title="requests/day"), "option:N",
       alt.Tooltip("usd_month:Q", format=",.0f", title="USD/month"), alt.Tooltip("replicas:Q", title="replicas")]
# Each line's dash is encoded beside its colour, so the legend's swatches are drawn as the lines are.
LINE_DASHES = {"API": [1, 0], tables.CHEAPEST_API: [2, 2], "Self-hosting": [1, 0], "Buying the cards": [6, 3]}
dashes = alt.StrokeDash("option:N", scale=alt.Scale(domain=drawn, range=[LINE_DASHES[o] for o in drawn]),
                        legend=alt.Legend(title=None, orient="bottom", columns=4, labelLimit=0))
base = alt.Chart(curve).encode(x=x, y=y, color=colors, strokeDash=dashes, tooltip=tip)
api_line = base.transform_filter(alt.datum.option == "API").mark_line(strokeWidth=2.5)
cheapest_line = base.transform_filter(alt.datum.option == tables.CHEAPEST_API).mark_line(strokeWidth=2)
sh_line = base.transform_filter(alt.datum.option == "Self-hosting").mark_line(strokeWidth=2.5, interpolate="step-after")
own_line = base.transform_filter(alt.datum.option == "Buying the cards").mark_line(strokeWidth=2,
                                                                                  interpolate="step-after")
now = marks[marks["what"] == "current"]
rule = alt.Chart(now).mark_rule(color="#888888", strokeDash=[5, 3]).encode(x="req_day:Q")
# On a log axis the lines run high where the bills cross (the red labels' place) and leave the foot clear; on a
# linear one they hug the foot, so the label goes on top there.
foot = y_type == "log"
rule_label = alt.Chart(now).mark_text(
    align=now["align"].iloc[0], baseline="bottom" if foot else "top", dx=5 if now["align"].iloc[0] == "left" else -5,
    dy=-4 if foot else 4, color="#888888",
    y=alt.expr("height") if foot else alt.Undefined).encode(
        x="req_day:Q", text="label:N", **({} if foot else {"y": alt.value(0)}))
pts = marks[marks["what"] != "current"]
be_pts = alt.Chart(pts).mark_point(filled=True, size=90, color="#d62728").encode(
    x="req_day:Q", y="usd_month:Q", shape=alt.Shape("what:N", legend=None,
                                                     scale=alt.Scale(domain=["break-even", "always cheaper"],
                                                                     range=["circle", "diamond"])),
    tooltip=["label:N", alt.Tooltip("req_day:Q", format=",.0f", title="requests/day"),
             alt.Tooltip("usd_month:Q", format=",.0f", title="USD/month")])

def _point_label(what: str, dy: int, **style) -> alt.LayerChart:
    """A red label beside its point, over a white halo of the same text so the dashed line of this scenario and the
    bills' lines do not run through it."""
    text = alt.Chart(pts[pts["what"] == what]).encode(x="req_day:Q", y="usd_month:Q", text="label:N")
    return alt.layer(text.mark_text(align="right", dx=-8, dy=dy, color="white", stroke="white", strokeWidth=4,
                                    **style),
                     text.mark_text(align="right", dx=-8, dy=dy, color="#d62728", **style))


be_label = _point_label("break-even", -10, fontWeight="bold")
st_label = _point_label("always cheaper", -26)
st.altair_chart(alt.layer(api_line, cheapest_line, sh_line, own_line, rule, rule_label, be_pts, be_label, st_label)
                .properties(height=440),
                width="stretch")
# Cards on a baseboard are bought by the board: the dashed line steps by the board, not by the replica.
lot = (f" in whole units of {s.buy_lot:,} cards (buy_lot: the card's baseboard), the spare ones idle"
       if s.buy_lot > 1 else "")
if not d.fits and refusal:
    st.caption(f"Only the API line is drawn, priced as if it took such requests: {refusal}.")
elif not d.fits:
    st.caption("Only the API line is drawn: not one request of in_tok + out_tok tokens fits beside the weights on "
               "the cards as set up.")
elif not d.priced and "Buying the cards" in drawn:
    st.caption("No rent per card-hour is set for this card, so renting is not drawn (enter one in the sidebar, Money); "
               f"the dashed green line is the replicas bought{lot}, each card paid off over the service life plus "
               "its power.")
elif not d.priced:
    st.caption("Only the API line is drawn: enter a rent per card-hour (sidebar, Money) to draw self-hosting.")
else:
    st.caption(f"Self-hosting is a staircase: each step is one more replica of {words.cards_text(s)}, rented whether busy "
               "or not, plus the flat upkeep. The API grows in proportion to the requests. Red circle: where "
               "self-hosting first gets cheaper; red diamond (when shown): above it, self-hosting stays cheaper at "
               f"every volume. Dashed green (where the card has a public price): the same replicas bought{lot}, each "
               "card paid off over the service life plus its power."
               + (" Dotted light orange: the catalogue's cheapest API row for this model, the same tokens at its "
                  "prices (the break-even points are against the link's row)." if d.cheaper_api is not None else ""))
vt = tables.volume_table(d)
# Each column its own format: cents only where a bill is that small (the API at light traffic), whole USD beside it.
sh_fmt, api_fmt = ui.usd_format(vt["self_host_usd_month"]), ui.usd_format(vt["api_usd_month"])
cheapest_fmt = ui.usd_format(vt["api_cheapest_usd_month"]) if "api_cheapest_usd_month" in vt else None
own_fmt = ui.usd_format(vt["own_usd_month"]) if "own_usd_month" in vt else None
ui.dataframe(vt,
             # Short headers and set widths: every column shows at 1,400 px without a sideways scroll.
             column_config={"req_day": st.column_config.NumberColumn("Requests a day", format="%,.0f", width=105),
                            "replicas": st.column_config.NumberColumn("Replicas", format="localized", width=70),
                            "cards": st.column_config.NumberColumn("Cards", format="localized", width=60),
                            "self_host_usd_month": st.column_config.NumberColumn(
                                "Renting USD/mo", format=sh_fmt, width=105,
                                help="The replicas rented, with the upkeep: USD a month"),
                            "own_usd_month": st.column_config.NumberColumn(
                                "Buying USD/mo", format=own_fmt, width=105,
                                help="The same replicas bought: each card paid off over the service life, its power "
                                     "at the replicas' duty, rack space and the upkeep (the dashed green line): USD a "
                                     "month"),
                            "api_usd_month": st.column_config.NumberColumn("API USD/mo", format=api_fmt, width=95,
                                                                           help="The API row of the link: USD a month"),
                            "api_cheapest_usd_month": st.column_config.NumberColumn(
                                "Cheapest API USD/mo", format=cheapest_fmt, width=140,
                                help="The catalogue's cheapest row for this model, the same tokens at its prices: "
                                     "USD a month"),
                            "cheaper": st.column_config.TextColumn("Cheapest", width=135,
                                                                  help="The cheapest of the bills on the row"),
                            "current": st.column_config.CheckboxColumn("This scenario", width=90)},
             # the verdict next to the volume, so a phone shows both without scrolling sideways
             column_order=["req_day", "cheaper", "self_host_usd_month", "own_usd_month", "api_usd_month",
                           "api_cheapest_usd_month", "replicas", "cards", "current"])
ui.download_csv(vt, "decision-cost-by-volume", "Download this table (CSV)")

# ---------------------------------------------------------------- every way to serve it (SPEC section 9)
st.subheader("Every way to serve it: the API, renting, buying, or a fleet plus the API")
opts = tables.options_table(r)
# Short headers and set widths, so that every column shows at 1,400 px without a sideways scroll.
ui.dataframe(opts.drop(columns=["key"]), pin="option", column_config={
    "option": st.column_config.TextColumn("Option", width=250),
    "usd_month": st.column_config.NumberColumn("USD/month", format=ui.usd_format(opts["usd_month"]), width=85),
    "usd_per_mtok_out": st.column_config.NumberColumn("USD / 1M out", format="%,.3f", width=90,
                                                      help="USD per million output tokens, the whole bill"),
    "replicas": st.column_config.NumberColumn("Replicas", format="%d", width=80),
    "capex_usd": st.column_config.NumberColumn("Purchase USD", format="%,.0f", width=95),
    "payback_months": st.column_config.NumberColumn("Payback (mo)", format="%,.1f", width=95,
                                                    help=f"Months until buying has cost less than renting (empty: "
                                                         f"never, or nothing to rent); past the service life "
                                                         f"({s.years:g} years), the purchase is not paid back before "
                                                         "the cards are retired"),
    "best": st.column_config.CheckboxColumn("Cheapest", width=70),
    "allowed": st.column_config.CheckboxColumn("Allowed", width=65)},
    column_order=["option", "usd_month", "best", "allowed", "usd_per_mtok_out", "replicas", "capex_usd",
                  "payback_months"])
# What moves each bill is a sentence, too long for a column beside eight others: a table of its own, full width.
ui.dataframe(opts[["option", "sensitive_to"]], pin="option", column_config={
    "option": st.column_config.TextColumn("Option", width=250),
    "sensitive_to": st.column_config.TextColumn("Moves most with (each input 10 % higher)", width="large")})
ticked = opts.loc[opts["best"]]  # the row ticked: the cheaper API row where it bills least
best = next(iter(ticked["option"]), "none")
# The marginal remark is about the options priced against the link's row, never about the ticked cheaper row.
st.caption(f"Cheapest allowed option: **{best}**"
           + (f": no option is allowed, since {refusal}; the bills above price requests no way can serve"
              if refusal else dm.ticked_best_text(d, next(iter(ticked["key"]), None)))
           + f". Buying pays the cards and servers off over {s.years:g} years at "
           f"{s.wacc:.0%} a year, less a {s.residual:.0%} resale value, plus their power at the replicas' duty "
           f"(PUE {s.pue:g}, {s.usd_kwh:g} USD/kWh); "
           + ("a fleet plus the API sizes its fleet on the day's traffic, hour by hour (a mix of 0 replicas is the "
              "API alone, one of every replica renting or buying alone"
              + ("; autoscaled, a rented mix runs only the replicas each hour needs" if s.autoscale else "")
              + "). " if s.profile else
              "a fleet plus the API needs the day's traffic (Traffic: profile), hour by hour. ")
           + ("The data may not go to an API provider (why=residency): the API and the mixed options are not allowed. "
              if not opts["allowed"].all() and not refusal else "")
           + ("The verdict above is the cheapest of these." if r["recommendation"] in OTHER_WAYS
              else "The verdict above weighs the API against a fleet for the busiest hour rented all day; these "
              "totals sit beside it." if s.autoscale and s.profile else
              "The verdict above is the rent-or-API answer; these totals sit beside it."))
ui.download_csv(opts, "decision-options", "Download this table (CSV)")

life, paid = tables.lifetime_table(r)
st.markdown(f"**Cash paid over the {s.years:g}-year service life**, USD (undiscounted)")
# The legend lists the lines drawn (a card without a rent draws no renting line).
drawn_life = [(tables.OPTION_NAMES[k], LINE_COLORS[line])
              for k, line in (("api", "API"), ("rent", "Self-hosting"), ("own", "Buying the cards"))
              if (life["option"] == tables.OPTION_NAMES[k]).any()]
option_colors = alt.Scale(domain=[o for o, _ in drawn_life], range=[c for _, c in drawn_life])
lines = alt.Chart(life).mark_line(strokeWidth=2.5).encode(
    x=alt.X("month:Q", title="months from the purchase", scale=alt.Scale(nice=False)),
    y=alt.Y("usd:Q", title="USD paid so far", axis=alt.Axis(labelExpr=ui.SI_LABEL_PLAIN)),
    color=alt.Color("option:N", scale=option_colors, legend=alt.Legend(title=None, orient="bottom", labelLimit=0)),
    tooltip=["option:N", alt.Tooltip("month:Q", format=",.0f"), alt.Tooltip("usd:Q", format=",.0f", title="USD")])
layers = [lines]
if len(paid):
    layers.append(alt.Chart(paid).mark_point(filled=True, size=90, color="#d62728").encode(
        x="month:Q", y="usd:Q", tooltip=["label:N"]))
st.altair_chart(alt.layer(*layers).properties(height=320), width="stretch")
life_text = ("Buying pays the cards and servers at month 0, then power, rack space and upkeep each month, and sells "
             f"the cards for {s.residual:.0%} of their price at the end; renting and the API pay their monthly bills. "
             "Red points: the month the purchase is paid back, where it is within the service life"
             + (": " + "; ".join(paid["label"]) + "." if len(paid) else " (not here).")
             if r["own_usd_month"] is not None and d.fits else
             "Only the API's list price is drawn: no request can be served (each is longer than the model's trained "
             "context, and too long for the cards as set up), so no fleet is rented or bought for them, and the API "
             "would refuse them too."
             if refusal and not d.fits else
             "Only the API is drawn: the model does not fit as set up, so no fleet can be rented or bought."
             if not d.fits else
             "Only renting and the API are drawn: buying needs the card's purchase price and power (Owning the cards: "
             "card_usd, power_w).")
if refusal and d.fits:  # drawn as if served: said before the lines are read as a plan
    life_text = ("Priced as if these requests could be served, which neither the cards nor the API do (each is "
                 "longer than the model's trained context). " + life_text)
st.caption(life_text)

day = tables.day_table(d)
if day is not None:
    st.markdown("**The day hour by hour**: requests an hour, served by the cards or sent to the API")
    mixed = bool(day["mixed_capacity"].notna().any())
    parts = ["served", "to_api"] if mixed else ["served"]
    bars = alt.Chart(day).transform_fold(parts, as_=["part", "req"]).transform_calculate(
        below="datum.part == 'served' ? 0 : 1").mark_bar().encode(
        order=alt.Order("below:Q", sort="ascending"),  # the cards' share at the bottom, the API's overflow on top
        x=alt.X("hour:O", title="hour of the day", axis=alt.Axis(labelAngle=0)),
        y=alt.Y("req:Q", stack=True, title="requests an hour", axis=alt.Axis(labelExpr=ui.SI_LABEL_PLAIN)),
        color=alt.Color("part:N", scale=alt.Scale(domain=parts, range=["#4c78a8", "#f58518"][:len(parts)]),
                        legend=alt.Legend(title=None, orient="bottom", columns=1, labelLimit=0, labelExpr=(
                            "datum.label == 'served' ? 'served by the cards' : 'sent to the API (mixed option)'"))),
        tooltip=["hour:O", alt.Tooltip("requests:Q", format=",.0f"), alt.Tooltip("to_api:Q", format=",.0f"),
                 alt.Tooltip("replicas_on:Q", title="replicas running")])
    fleet = alt.Chart(day).mark_line(interpolate="step", color="#333333", strokeDash=[6, 3]).encode(
        x="hour:O", y="fleet_capacity:Q")
    layers = [bars, fleet]
    if mixed:
        layers.append(alt.Chart(day).mark_line(interpolate="step", color="#54a24b").encode(
            x="hour:O", y="mixed_capacity:Q"))
    st.altair_chart(alt.layer(*layers).properties(height=300), width="stretch")
    st.caption("Dashed: what the fleet sized for the busiest hour serves"
               + (" (under autoscaling, only the replicas each hour needs run)" if s.autoscale else "")
               + "; green, where a mixed option exists: what its smaller fleet serves, the rest (orange) going to "
               "the API. The shape is the link's profile (Traffic: profile).")

# ---------------------------------------------------------------- which cards to get
st.subheader("Which cards to get")
plan = ui.table("plan_table", s)
base = ui.base_url()
NUM = st.column_config.NumberColumn
CHECK = st.column_config.CheckboxColumn
# Short headers and set widths so every column shows at 1,400 px; the CSV below has both bills, the weights and the
# card count (replicas x cards per replica).
ui.dataframe(plan.assign(link=[f"{base}/decision?{q}" for q in plan["query"]]).drop(columns=["query", "card"]),
             pin="card_name", column_config={
    "card_name": st.column_config.TextColumn("Card", width=190),
    "best_usd_month": NUM("USD/mo", format="%,.0f", width=70, help="The cheaper of renting and buying, USD a month"),
    "best": st.column_config.TextColumn("Rent/buy", width=68, help="Which of the two is cheaper"),
    "gpus": NUM("TP", format="%d", width=44, help="Cards per replica (tensor parallel)"),
    "replicas": NUM("Replicas", format="%d", width=66),
    "own_capex_usd": NUM("Purchase USD", format="%,.0f", width=100,
                         help="Buying every card of the fleet, in whole baseboards (buy_lot)"),
    "meets_tpot": CHECK("TPOT met", width=72, help="The latency target (tpot_ms) holds at the busiest hour"),
    "memory_caps_batch": CHECK("Mem caps", width=74, help="Memory caps the batch before compute does"),
    "max_batch": NUM("In memory", format="%,d", width=70, help="Requests that fit in memory, per replica"),
    "capacity_measured": CHECK("Measured", width=64,
                               help="A published row measured the engine on such a set-up (else its widest band)"),
    "holds_at_band": CHECK("Holds", width=52, help="The same replicas still carry the busiest hour at the slow end "
                           "of the engine's capacity band; unticked, one more replica may be needed"),
    "link": st.column_config.LinkColumn("Scenario", display_text="open", width=64),
}, column_order=["card_name", "best_usd_month", "best", "gpus", "replicas", "own_capex_usd", "meets_tpot",
                 "memory_caps_batch", "max_batch", "capacity_measured", "holds_at_band", "link"])
st.caption(f"The API would bill {words.money(d.api_usd_month)} a month for the same traffic. "
           f"Every card of the catalogue with 1, 2, 4 or 8 cards per replica, in {notes.checkpoint_label(s)} weights (change the "
           "Weight format to plan another), for this traffic's busiest hour, ranked by the cheaper of renting and "
           "buying, the set-ups that meet the latency target and hold at the slow end of the capacity band first; set-ups where the model does not fit, or that the engine cannot split, are left out. Each row "
           "opens its own scenario; where no row the figures were fitted to measured the engine on such a set-up, its capacity error is "
           "the engine's widest, and Holds is unticked where at the slow end of that error the same replicas no longer "
           "carry the busiest hour: such a row ranks after every one that holds, however cheap. `python -m calc --plan \"<link>\" --weights fp8,int4-g128` prints the same "
           "table for several formats. The CSV gives the rented and the bought bill of each row.")
if plan.empty and refusal:
    st.error(f"No card serves these requests: {refusal}.", icon=":material/block:")
if consumer := planner.consumer_note(plan["card"]):
    st.caption(consumer)
ui.download_csv(plan.assign(link=[f"{base}/decision?{q}" for q in plan["query"]]).drop(columns=["query"]),
                "decision-plan", "Download this table (CSV)")

# ---------------------------------------------------------------- what flips it
st.subheader("What would flip the verdict")
if d.report["recommendation"] == "api-cheaper-row":  # the tiles weigh the link's row, not the cheaper one heading the page
    st.caption(f"Against the API row priced in the link ({words.money(d.api_usd_month)} a month), the verdict these "
               "tiles flip is renting against that row; the cheaper API row above beats self-hosting as it stands.")
u = d.units
f1, f2, f3, f4 = st.columns(4)
f1.metric("Rent that flips it", "none" if d.price_to_flip is None else f"{d.price_to_flip:,.2f} USD/h",
          help="Rent per card-hour at which both options cost the same at this volume.")
f2.metric("Volume that flips it (a day)", short_flip, delta=flip_after, delta_color="off", delta_arrow="off",
          help=flip_help)
f3.metric("Self-hosting per 1M output tokens", words.price_short(u.self_host_all_in),
          help="The whole monthly bill (rent of every replica, upkeep, prompt time) over the month's output tokens. "
               + ("" if u.rent_at_duty is None else f"Rent alone, decode only, at the implied duty of {u.duty:.1%}: "
                  f"{u.rent_at_duty:,.3f} USD (the table below)."))
f4.metric("API per 1M output tokens", words.price_short(u.api_all_in),
          help="The API bill (prompt and output prices) over the same output tokens.")
st.markdown(f"- **Rent:** {dm.rent_flip_text(d)}\n- **Volume:** "
            + (dm.volume_sentence(d) or words.first_upper(dm.not_served_text(d)) + "."))
ut = dm.unit_cost_table(d)
ui.dataframe(ut,
             column_config={"basis": "Cost per million output tokens",
                            "usd_per_mtok_out": st.column_config.NumberColumn("USD per 1M", format="%,.3f")})
st.caption("The textbook figure assumes a replica busy all month; real traffic keeps it busy only part of the time "
           "(the implied duty), and the whole bill also pays for prompt processing and upkeep.")
ui.download_csv(ut, "decision-cost-per-million", "Download this table (CSV)")

# ---------------------------------------------------------------- capacity
st.subheader("Capacity for the busiest hour")
cap = d.cap
if not d.fits and refusal:
    st.error(f"Nothing can be served, so there is no capacity to size: {refusal}; no number of cards, format or "
             "engine changes that (Levers: requests within the context).", icon=":material/block:")
elif not d.fits:
    st.error("Nothing can be served, so there is no capacity to size: use fewer bits per weight, more cards "
             "(gpus) or a card with more memory.", icon=":material/block:")
elif not cap.meets_tpot:
    st.error(dm.latency_sentence(d), icon=":material/timer:")
k1, k2, k3, k4 = st.columns(4)
k1.metric("Replicas", "—" if d.replicas is None else f"{d.replicas:,}",
          help=f"Each replica is {words.cards_text(s)}; sized for {s.peak:g}× the average hour.")
k2.metric("Implied duty", "—" if d.duty is None else f"{d.duty:.1%}",
          help="Fraction of the month each replica is busy with this traffic.")
k3.metric("Time to first token", "—" if not d.fits else f"{cap.ttft_ms:,.0f} ms",
          help="Prompt processing on an idle replica.")
# The figure a reader meets in the busiest hour: the step at the requests a replica then holds, where that is fewer
# than it is sized for; a latency target is checked at the full serving batch, so that one shows where one is set.
light = dm.in_flight(d) if s.tpot_ms is None else None
tpot_label, tpot_ms, tpot_delta = "Time per output token", cap.step_ms, None
if d.fits and s.tpot_ms is not None:
    tpot_label = "TPOT, full batch"
    tpot_delta = f"target {s.tpot_ms:g} ms: {'met' if cap.meets_tpot else 'missed'}"
elif light is not None:
    tpot_label, tpot_ms = "TPOT, busiest hour", light[2]
    tpot_delta = f"at batch {cap.serving_batch:,}: {cap.step_ms:,.1f} ms"  # short: a quarter of the page wide
k4.metric(tpot_label, "—" if not d.fits else f"{tpot_ms:,.1f} ms", delta=tpot_delta,
          delta_color="off" if s.tpot_ms is None else "normal" if cap.meets_tpot else "inverse", delta_arrow="off",
          help=f"Time per output token (TPOT): the decode step at the serving batch of {cap.serving_batch:,}, the most a replica is sized to hold: "
               f"{cap.step_ms:,.1f} ms. " + dm.in_flight_sentence(d))
ui.dataframe(dm.capacity_text(d), height="content",
             column_config={"figure": "Figure", "value": "Value", "unit": "Unit"})
ui.download_csv(dm.capacity_table(d), "decision-capacity", "Download this table (CSV)")

# ---------------------------------------------------------------- reasons beyond cost
st.subheader("Reasons to self-host anyway")
st.caption("None of these has a price here, and any of them can justify self-hosting at a higher cost.")
chosen = (s.why or "").split(",")
for rid, text in dm.REASONS:
    st.session_state[f"_why_{rid}"] = rid in chosen  # the boxes show the link's `why`
    st.checkbox(text, key=f"_why_{rid}", on_change=ui.set_reasons, args=([r for r, _ in dm.REASONS],))
if s.why:
    st.caption(f"{len(s.why.split(','))} ticked: kept in the link (`why`) and checked in the memo.")

# ---------------------------------------------------------------- memo
st.subheader("Decision memo")
text = dm.memo(ev, base_url=ui.base_url(), refused=ui.refused())
st.download_button("Download the memo (Markdown)", text.encode(), file_name=f"decision-memo-{s.model}-{words.volume_text(s.req_day).replace(',', '')}-a-day.md",
                   mime="text/markdown", key="dl-decision-memo", icon=":material/download:")
st.caption(f"The same text as `python -m calc --memo \"<link>\"` with CALC_BASE_URL set to {ui.base_url()}, the "
           "address this page is served at; its link opens this scenario (CALC_BASE_URL, where set for the server, "
           "overrides the address, e.g. behind a proxy).")
with st.expander("Read the memo"):
    st.markdown(text)
with st.expander("Inputs behind it"):
    it = dm.inputs_table(s)
    ui.dataframe(it)
    ui.download_csv(it, "decision-inputs", "Download this table (CSV)")
