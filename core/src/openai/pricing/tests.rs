use super::*;

fn bill(input: u64, cached: u64, output: u64, searches: u32, tier: Option<&str>) -> Usage {
    Usage {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        web_searches: searches,
        service_tier: tier.map(str::to_owned),
        ..Usage::default()
    }
}

fn usd(estimate: Estimate) -> f64 {
    estimate.total().map_or(f64::NAN, Picodollars::usd)
}

#[test]
fn tokens_and_searches_at_the_standard_rates() {
    let prices = Prices::default();
    // gpt-6.1-terra: 9,000 fresh input at $1/M, 1,000 cached at $0.05/M, 2,000 output at
    // $5/M, 3 searches at $0.01: 0.009 + 0.00005 + 0.01 + 0.03.
    let e = prices.estimate(
        "gpt-6.1-terra",
        &bill(10_000, 1_000, 2_000, 3, Some("default")),
    );
    assert_eq!(usd(e), 0.049_05);
    let Estimate::Usd(cost) = e else {
        panic!("{e:?}")
    };
    assert_eq!(cost.searches, Picodollars(30_000_000_000));
    assert_eq!(cost.source, PriceSource::BuiltIn);
    assert!(!cost.long_context);
}

#[test]
fn a_snapshot_id_takes_its_models_price() {
    let prices = Prices::default();
    let b = bill(100_000, 0, 0, 0, None);
    assert_eq!(usd(prices.estimate("gpt-6.1-sol-2026-09-29", &b)), 0.2);
    assert_eq!(usd(prices.estimate("gpt-6.1-sol", &b)), 0.2);
    // Not a date: no guess from a neighbour.
    assert_eq!(
        prices.estimate("gpt-6.1-sol-mini", &b),
        Estimate::Unknown(Unpriced::Model)
    );
    assert_eq!(
        prices.estimate("gpt-6.1-sol-2026-9-29x", &b),
        Estimate::Unknown(Unpriced::Model)
    );
    assert_eq!(strip_snapshot("-2026-09-29"), None);
    assert_eq!(strip_snapshot("2026-09-29"), None);
    assert_eq!(strip_snapshot("é"), None);
}

#[test]
fn tiers_scale_the_tokens_but_not_the_searches() {
    let prices = Prices::default();
    let base = |tier| usd(prices.estimate("gpt-6-luna", &bill(200_000, 0, 1_000_000, 1, tier)));
    // $0.02 + $0.50 of tokens, $0.01 of search.
    assert_eq!(base(None), 0.53);
    assert_eq!(base(Some("auto")), 0.53);
    assert_eq!(base(Some("flex")), 0.27);
    assert_eq!(base(Some("priority")), 1.05);
    assert_eq!(
        prices.estimate("gpt-6-luna", &bill(1, 0, 1, 0, Some("ultrafast"))),
        Estimate::Unknown(Unpriced::Tier)
    );
    assert_eq!(
        prices.estimate("gpt-6-luna", &bill(1, 0, 1, 0, Some("warp"))),
        Estimate::Unknown(Unpriced::Tier)
    );
}

#[test]
fn above_272k_input_tokens_the_whole_request_is_long_context() {
    let prices = Prices::default();
    let at = usd(prices.estimate("gpt-6.1-terra", &bill(272_000, 0, 100_000, 0, None)));
    assert_eq!(at, 0.772);
    let e = prices.estimate("gpt-6.1-terra", &bill(272_001, 1, 100_000, 0, None));
    // 272,000 fresh ×2 at $1/M, 1 cached ×2 at $0.05/M, 100,000 output ×1.5 at $5/M.
    assert_eq!(usd(e), 1.294_000_1);
    assert!(matches!(
        e,
        Estimate::Usd(Cost {
            long_context: true,
            ..
        })
    ));
}

#[test]
fn configuration_adds_and_replaces_models() {
    let mut prices = Prices::default();
    let price = ModelPrice {
        input: PerToken::from_usd_per_million(0.4).unwrap(),
        cached_input: PerToken::from_usd_per_million(0.1).unwrap(),
        cache_write: PerToken::from_usd_per_million(0.5).unwrap(),
        output: PerToken::from_usd_per_million(1.6).unwrap(),
        long_context_above: None,
        fees: RequestFees::default(),
    };
    prices.configure("my-model", price);
    prices.configure("gpt-6-luna", price);
    let b = bill(100_000, 50_000, 1_000_000, 0, None);
    // 50,000 fresh at $0.40/M, 50,000 cached at $0.10/M, 1M output at $1.60/M.
    assert_eq!(usd(prices.estimate("my-model", &b)), 1.625);
    let Estimate::Usd(cost) = prices.estimate("gpt-6-luna", &b) else {
        panic!()
    };
    assert_eq!(cost.source, PriceSource::Configured);
    assert_eq!(
        prices
            .models()
            .filter(|(n, _, _)| *n == "gpt-6-luna")
            .count(),
        1
    );
}

#[test]
fn cached_tokens_beyond_the_input_count_as_input() {
    let prices = Prices::default();
    // A provider reporting more cached than input tokens cannot make money negative.
    let e = prices.estimate("gpt-6.1-terra", &bill(10, 50, 0, 0, None));
    assert_eq!(e.total(), Some(Picodollars(10 * 50_000)));
}

#[test]
fn extreme_counts_saturate_instead_of_wrapping() {
    let prices = Prices::default();
    let e = prices.estimate(
        "gpt-6.1-sol",
        &bill(u64::MAX, 0, u64::MAX, u32::MAX, Some("priority")),
    );
    assert_eq!(e.total(), Some(Picodollars(u64::MAX)));
}

#[test]
fn rates_outside_reason_are_refused() {
    assert_eq!(PerToken::from_usd_per_million(-1.0), None);
    assert_eq!(PerToken::from_usd_per_million(f64::NAN), None);
    assert_eq!(PerToken::from_usd_per_million(1e7), None);
    assert_eq!(PerToken::from_usd_per_million(0.000_001), Some(PerToken(1)));
    assert_eq!(
        PerToken::from_usd_per_million(2.5).map(PerToken::usd_per_million),
        Some(2.5)
    );
    assert_eq!(
        Picodollars::from_usd(10.0 / 1000.0),
        Some(WEB_SEARCH_PER_CALL)
    );
}

#[test]
fn cache_writes_are_billed_at_their_rate_instead_of_the_input_rate() {
    let prices = Prices::default();
    // gpt-6.2-sol: 100,000 input of which 20,000 read from the cache and 30,000 written
    // to it; 50,000 fresh at $2/M, 20,000 cached at $0.10/M, 30,000 written at $2.50/M,
    // 10,000 output at $10/M: 0.1 + 0.002 + 0.075 + 0.1.
    let mut b = bill(100_000, 20_000, 10_000, 0, None);
    b.cache_write_tokens = 30_000;
    assert_eq!(usd(prices.estimate("gpt-6.2-sol", &b)), 0.277);
    // Above 272,000 input tokens the write rate doubles with the input rates.
    let mut long = bill(300_000, 0, 0, 0, None);
    long.cache_write_tokens = 100_000;
    // 200,000 at $4/M and 100,000 at $5/M.
    assert_eq!(usd(prices.estimate("gpt-6.2-sol", &long)), 1.3);
    // More written than the input left after the cached tokens: capped, never negative.
    let mut odd = bill(10, 4, 0, 0, None);
    odd.cache_write_tokens = 50;
    let per_token = |usd_per_m: f64| PerToken::from_usd_per_million(usd_per_m).unwrap().0;
    assert_eq!(
        prices.estimate("gpt-6.2-sol", &odd).total(),
        Some(Picodollars(4 * per_token(0.1) + 6 * per_token(2.5)))
    );
}

#[test]
fn gpt_6_2_astra_and_sol_are_priced_as_published() {
    let prices = Prices::default();
    let rates = |model: &str| {
        let (p, source) = prices.of(model).unwrap();
        assert_eq!(source, PriceSource::BuiltIn);
        [p.input, p.cached_input, p.cache_write, p.output].map(PerToken::usd_per_million)
    };
    assert_eq!(rates("gpt-6.2-astra"), [8.0, 0.4, 10.0, 40.0]);
    assert_eq!(rates("gpt-6.2-sol"), [2.0, 0.1, 2.5, 10.0]);
    // The 1.25 rule where the pages give no separate figure.
    assert_eq!(rates("gpt-6-luna")[2], 0.125);
}

#[test]
fn regional_endpoints_bill_built_in_models_ten_percent_more() {
    assert_eq!(residency_region("https://eu.api.openai.com/v1"), Some("eu"));
    assert_eq!(
        residency_region("https://JP.api.openai.com:443/v1"),
        Some("jp")
    );
    assert_eq!(residency_region("https://api.openai.com/v1"), None);
    assert_eq!(residency_region("https://xx.api.openai.com/v1"), None);
    assert_eq!(residency_region("http://eu.api.openai.com/v1"), None);
    assert_eq!(residency_region("https://eu.api.openai.com.evil/v1"), None);
    let mut prices = Prices {
        residency: Some("eu"),
        ..Prices::default()
    };
    // gpt-6.1-terra at eu: 9,000 fresh input at $1.10/M, 1,000 cached at $0.055/M, 2,000
    // output at $5.50/M, 3 searches at $0.01 (not uplifted):
    // 0.0099 + 0.000055 + 0.011 + 0.03.
    let b = bill(10_000, 1_000, 2_000, 3, None);
    assert_eq!(usd(prices.estimate("gpt-6.1-terra", &b)), 0.050_955);
    // Flex halves the uplifted rates: gpt-6-luna, 200,000 input at $0.11/M and 1M output
    // at $0.55/M, halved, plus one search: 0.011 + 0.275 + 0.01.
    let luna = bill(200_000, 0, 1_000_000, 1, Some("flex"));
    assert_eq!(usd(prices.estimate("gpt-6-luna", &luna)), 0.296);
    // A configured price is the operator's: no uplift.
    let price = ModelPrice {
        input: PerToken::from_usd_per_million(1.0).unwrap(),
        cached_input: PerToken::from_usd_per_million(1.0).unwrap(),
        cache_write: PerToken::from_usd_per_million(1.0).unwrap(),
        output: PerToken::from_usd_per_million(1.0).unwrap(),
        long_context_above: None,
        fees: RequestFees::default(),
    };
    prices.configure("mine", price);
    assert_eq!(
        usd(prices.estimate("mine", &bill(1_000_000, 0, 0, 0, None))),
        1.0
    );
}

#[test]
fn parallel_is_priced_per_request_by_effort_and_a_reported_cost_wins() {
    let prices = Prices::default();
    let with = |effort| Usage {
        effort,
        ..bill(5_000, 0, 800, 0, None)
    };
    // Parallel: $10 per 1,000 low requests, $50 per 1,000 medium ones (also the tier of
    // a request that sends no effort); no token rates.
    let low = prices.estimate("parallel", &with(Some(Effort::Low)));
    assert_eq!(usd(low), 0.01);
    assert_eq!(
        usd(prices.estimate("parallel", &with(Some(Effort::Medium)))),
        0.05
    );
    assert_eq!(usd(prices.estimate("parallel", &with(None))), 0.05);
    let Estimate::Usd(cost) = low else { panic!() };
    assert_eq!(
        (cost.tokens, cost.fees),
        (Picodollars(0), Picodollars(10_000_000_000))
    );
    // No published fee for high: no guess.
    assert_eq!(
        prices.estimate("parallel", &with(Some(Effort::High))),
        Estimate::Unknown(Unpriced::Fee)
    );
    // A configured fee for every effort.
    let mut configured = Prices::default();
    let flat = ModelPrice {
        fees: RequestFees {
            any: Picodollars::from_usd(0.2),
            ..RequestFees::default()
        },
        ..*prices.of("parallel").unwrap().0
    };
    configured.configure("parallel", flat);
    assert_eq!(
        usd(configured.estimate("parallel", &with(Some(Effort::High)))),
        0.2
    );
    // What the service billed (Perplexity's usage.cost) is the cost, whatever the table.
    let billed = Usage {
        billed: Some(crate::openai::Billed {
            total: Picodollars::from_usd(0.022_525).unwrap(),
            tools: Picodollars::from_usd(0.015).unwrap(),
        }),
        ..bill(1_900, 0, 300, 3, None)
    };
    let Estimate::Usd(cost) = prices.estimate("openai/gpt-5.5", &billed) else {
        panic!()
    };
    assert_eq!(cost.source, PriceSource::Reported);
    assert_eq!(cost.total().usd(), 0.022_525);
    assert_eq!(cost.searches.usd(), 0.015);
}
