"""Ledger of the hopfield claims whose verdict flips with the base seed or fails at full scale
(criterion kept, numbers here: verify/ledger.py). Each entry names its scale; "base seed S" is
``verify run --seed S``. Registers no claim.
"""

from __future__ import annotations

from verify.ledger import LedgerEntry, record

record(
    LedgerEntry(
        claim_id="hopfield.wrong_context.fails",
        measured="quick scale: with the wrong context capacity.gain's criterion fails at every base seed "
        "(0, 1, 2, 3, 4, 11, 13; no seed has both capacities on the grid); its control correct_context "
        "(capacity.gain's criterion with the correct context), gain exponent interval against D3's 0.924: "
        "base seed 0 [0.823, 0.933] fails as required, 1 [0.835, 1.026] inconclusive, 2 [0.837, 0.954] "
        "fails as required, 3 [0.819, 1.040] inconclusive, 4 [0.843, 1.005] inconclusive, 11 [0.740, "
        "1.065] inconclusive, 13 [0.824, 0.934] passes the wrong-context criterion (capacity.gain's "
        "verdict fail there): the bracket passes at 0, 2, is inconclusive at 1, 3, 4, 11 and vacuous at "
        "13. At revision 819e643 (capacity.gain's criterion before its operating characteristic was "
        "measured) it passed at 0-4",
        tried="nothing: the bracket's passing side is the capacity.gain claim, whose criterion is being "
        "decided from its operating characteristic; this entry records the seeds as measured",
        reason="the bracket's other side, capacity.gain, is itself undecided at this budget (its interval "
        "over 3 seeds is about 0.3 wide around D3's 0.924 and the 0.75 alternative), so at some base seeds "
        "the correct context cannot be told from the wrong one by the same criterion",
        flips_with_seed=True,
        scales=("quick",),
        known_vacuous=("correct_context",),
        seed_verdicts={
            0: "pass",
            1: "inconclusive",
            2: "pass",
            3: "inconclusive",
            4: "inconclusive",
            11: "inconclusive",
            13: "pass",
        },
    )
)


# Full scale (run of 2026-12-06 on the 2-core Intel Xeon, revision b18dcc4, seed 0; results/full):
# judged by the claims' current criteria, not reproduced there; the quick-scale verdicts stand.

record(
    LedgerEntry(
        claim_id="hopfield.capacity.d3",
        measured="full scale (d = 32, beta = 16, kappa = 4, N_eff = 16, 3 seeds): ungated capacity N_u = "
        "371.0 / 355.8 / 372.3, gated N_g = 22,923 / 22,838 / 22,965 against D3's N_eff + (N_u - N_eff) "
        "e^kappa = 19,396 / 18,567 / 19,467: N_g / prediction = 1.182 / 1.230 / 1.180, 95% t-interval of "
        "ln(N_g / prediction) [0.121, 0.238], which excludes D3's 0 (and the factor-2 alternatives); the "
        "plain N_u e^kappa law (ln ratio -0.044 from D3) is rejected too. Quick scale (d = 16) passes: "
        "[-0.439, 0.002]. Control wrong_context fails as required",
        tried="one full-scale run at seed 0 under the criterion fixed from its operating characteristic; "
        "no parameter changed after it",
        reason="suspected: at d = 32 the gated capacity exceeds D3's effective-competitor count by a "
        "stable 18-23% on every seed (the three factors agree to 0.05), so the gated-off memories crowd "
        "the open ones less than e^-kappa times their ungated crosstalk predicts; whether the excess "
        "depends on d or kappa was not tried",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="hopfield.lm.margin",
        measured="full scale (50 prompts per relation and draw, draws 0-2: 864 SmolLM2 and 870 Gemma "
        "prompts), relation-stated prompts: SmolLM2 margin up 0.772, mass up 0.921 (holds); Gemma 3 "
        "270M margin up 0.609 (0.607 / 0.617 / 0.603 by draw) against 0.7, mass up 0.948. Gemma's "
        "margin up rate by relation: capital 0.893, city_country 0.558, continent 0.720, currency "
        "0.207, language 0.553, symbol 0.713. Control random weights fails as required (margin up "
        "0.51 / 0.46, mass up 0.42 / 0.53)",
        tried="one full-scale run at seed 0 with the statement and its point criterion as at quick scale",
        reason="at quick scale (72 prompts) Gemma's rate sat within sampling noise of 0.7 and flipped with "
        "the seed; with 870 prompts it is 0.61 on every draw, so the statement does not hold for Gemma: "
        "the context raises the answer's margin over the other candidates in about 60% of prompts, "
        "much less for currency (0.21) and language (0.55; why per relation was not investigated); "
        "the candidate mass rises almost always",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="hopfield.lm.zero_shot_discriminates",
        measured="full scale (864 SmolLM2 and 870 Gemma prompts), relation-ambiguous prompts: SmolLM2 "
        "accf_V 0.617 [0.586, 0.648], acc0_C - 3/|C| 0.004 [-0.021, 0.028] (at chance), acc0_C - accf_V "
        "-0.463 [-0.498, -0.428]; Gemma 3 270M accf_V 0.734 [0.703, 0.763], acc0_C - 3/|C| 0.333 "
        "[0.295, 0.368], acc0_C - accf_V -0.256 [-0.294, -0.218] (misses the -0.1). Controls random "
        "weights and shuffled query fail as required",
        tried="the statement as restated before any judged run; one full-scale run at seed 0",
        reason="as at quick scale (same entry there): with a query that names only the subject the "
        "zero-shot pass cannot know which relation is asked, so within one relation's candidates it "
        "ranks the answer at chance (SmolLM2) or well below the full prompt's recall (Gemma)",
        scales=("full",),
    )
)

record(
    LedgerEntry(
        claim_id="hopfield.capacity.gain",
        measured="full scale (d = 32, kappa = 4, N_eff = 16, 3 seeds), seed 0, revision 9e61c93: N_u = "
        "371.0 / 355.8 / 372.3, N_g = 22,923 / 22,838 / 22,965, N_g / N_u = 61.8 / 64.2 / 61.7; gain "
        "exponent c interval [1.019, 1.049] against D3's 0.989: excludes D3 (and 0.75 and the plain "
        "c = 1). Control wrong_context fails as required. Quick scale (d = 16) passes at seed 0",
        tried="one full-scale run at seed 0 under the criterion fixed from its operating characteristic",
        reason="the same excess as capacity.d3 at full scale: the gated capacity is 18-23% above D3's "
        "effective-competitor prediction on every seed, which moves c above D3's 0.989 by about 0.045 "
        "with a paired interval only 0.03 wide; why the gated-off memories crowd less than predicted "
        "at d = 32 was not investigated",
        scales=("full",),
    )
)


record(
    LedgerEntry(
        claim_id="hopfield.capacity.gain",
        measured="quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 pass {gain "
        "exponent c = ln(N_g/N_u)/kappa: [0.8225803550248985, 0.9328296812898111]}; 1 "
        "inconclusive {gain exponent c = ln(N_g/N_u)/kappa: [0.8347762256712516, "
        "1.025633909168031]}; 2 pass {gain exponent c = ln(N_g/N_u)/kappa: [0.8369490177491109, "
        "0.9540734878130174]}; 3 inconclusive {gain exponent c = ln(N_g/N_u)/kappa: "
        "[0.8186397154885005, 1.040044610588694]}; 4 inconclusive {gain exponent c = "
        "ln(N_g/N_u)/kappa: [0.8430012303588696, 1.005390929616603]}",
        tried="nothing after the judged seeds: the criterion is kept (verify stability over the "
        "whole registry)",
        reason="its 95% interval over seeds ends near its threshold at this budget, so whether it clears"
        " it depends on the base seed (pass at some, inconclusive at others, never fail) (power "
        "0.755 at 3 seeds; about 6 seeds reach 0.8 by verify oc)",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "inconclusive", 2: "pass", 3: "inconclusive", 4: "inconclusive"},
    )
)


record(
    LedgerEntry(
        claim_id="hopfield.capacity.d3",
        measured="quick scale, base seeds 0-4 at revision 5bcbefa (verify stability): 0 pass {ln(N_g / D3 "
        "prediction): [-0.43876058215846947, 0.0022367229011811818]}; 1 inconclusive {ln(N_g / D3"
        " prediction): [-0.32668493720111014, 0.4367457967860072]}; 2 pass {ln(N_g / D3 "
        "prediction): [-0.3619155724440062, 0.10658230781161987]}; 3 inconclusive {ln(N_g / D3 "
        "prediction): [-0.3932327729970835, 0.4923868074036908]}; 4 inconclusive {ln(N_g / D3 "
        "prediction): [-0.30031033570644255, 0.34924846132449044]}",
        tried="nothing after the judged seeds: the criterion is kept (verify stability over the "
        "whole registry)",
        reason="its 95% interval over seeds ends near its threshold at this budget, so whether it clears"
        " it depends on the base seed (pass at some, inconclusive at others, never fail) (power "
        "0.755 at 3 seeds; about 6 seeds reach 0.8 by verify oc)",
        flips_with_seed=True,
        scales=("quick",),
        seed_verdicts={0: "pass", 1: "inconclusive", 2: "pass", 3: "inconclusive", 4: "inconclusive"},
    )
)


record(
    LedgerEntry(
        claim_id="hopfield.lm.first_order",
        measured="full scale (50 prompts per relation and draw, draws 0-2: 864 SmolLM2 and 870 Gemma "
        "prompts), relation-ambiguous prompts, seed 0: SmolLM2 acc1_V - accf_V = -0.612 [-0.645, "
        "-0.581], acc1_V - acc0_V = -0.006 [-0.012, -0.001]; Gemma 3 270M acc1_V - accf_V = -0.723 "
        "[-0.753, -0.692], acc1_V - acc0_V = -0.003 [-0.008, 0]. The full prompt recalls (accf_V 0.617 "
        "SmolLM2, 0.734 Gemma); the first-order prediction recalls 0.005 / 0.011, the query alone "
        "0.010 / 0.015, the product of the two full distributions 0.047 / 0.054; the context-only pass "
        "puts m_C = 0.238 / 0.441 on C. Controls random weights, wrong gate and shuffled query fail as "
        "required. Run of 2026-12-06 at revision 80dd953 (432 s)",
        tried="one full-scale run at seed 0 with the statement and criterion of the quick scale",
        reason="as at quick scale (entry beside the claim): the zero-shot query alone puts almost no "
        "mass on the answer over the vocabulary, and a gate that only rescales the relation's "
        "candidates by m_C cannot lift the answer above the query's top tokens; with 12x the prompts "
        "the intervals are narrow and both models miss by a wide margin",
        scales=("full",),
    )
)
