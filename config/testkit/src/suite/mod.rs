/// The end-to-end tests, as plain functions; [`e2e_suite!`](crate::e2e_suite) makes a
/// `#[test]` of each for one binary.
pub mod admission;
pub mod answers;
pub mod bad_upstream;
pub mod caps;
pub mod clients;
pub mod concurrency;
pub mod config;
pub mod cost;
pub mod dashboard;
pub mod doctor;
pub mod eras;
pub mod fleet;
pub mod gateway;
pub mod http;
pub mod identities;
pub mod lease;
pub mod lifecycle;
pub mod limits;
pub mod models;
pub mod oauth;
pub mod observability;
pub mod providers;
pub mod proxies;
pub mod scale_out;
pub mod sdks;
pub mod store;
pub mod streaming;
pub mod tasks;
pub mod traces;

/// Instantiates the whole end-to-end suite for the binary at `$bin` (a `&'static str`,
/// usually `env!("CARGO_BIN_EXE_<name>")`): one `#[test]` per suite function.
#[macro_export]
macro_rules! e2e_suite {
    ($bin:expr) => {
        mod admission {
            #[test]
            fn refused_bodies_are_skipped_and_their_ids_never_built() {
                $crate::run($bin, $crate::suite::admission::refused_bodies_are_skipped_and_their_ids_never_built);
            }
            #[test]
            fn a_flood_of_unknown_key_ids_never_crowds_out_a_known_key() {
                $crate::run($bin, $crate::suite::admission::a_flood_of_unknown_key_ids_never_crowds_out_a_known_key);
            }
            #[test]
            fn an_admitted_callers_hostile_body_is_weighed_before_it_is_built() {
                $crate::run($bin, $crate::suite::admission::an_admitted_callers_hostile_body_is_weighed_before_it_is_built);
            }
        }
        mod gateway {
            #[test]
            fn a_trusted_gateway_names_the_user_for_limits_tasks_spend_and_the_call_log() {
                $crate::run($bin, $crate::suite::gateway::a_trusted_gateway_names_the_user_for_limits_tasks_spend_and_the_call_log);
            }
            #[test]
            fn an_identity_header_from_an_untrusted_peer_names_nobody_and_is_counted() {
                $crate::run($bin, $crate::suite::gateway::an_identity_header_from_an_untrusted_peer_names_nobody_and_is_counted);
            }
            #[test]
            fn only_the_gateways_credential_names_the_user_another_tenants_header_is_ignored() {
                $crate::run($bin, $crate::suite::gateway::only_the_gateways_credential_names_the_user_another_tenants_header_is_ignored);
            }
            #[test]
            fn an_oauth_token_names_its_own_identity_unless_its_client_is_the_gateway() {
                $crate::run($bin, $crate::suite::gateway::an_oauth_token_names_its_own_identity_unless_its_client_is_the_gateway);
            }
        }
        mod identities {
            #[test]
            fn a_flood_of_identities_from_the_gateway_leaves_room_memory_and_holders_as_they_were() {
                $crate::run($bin, $crate::suite::identities::a_flood_of_identities_from_the_gateway_leaves_room_memory_and_holders_as_they_were);
            }
        }
        mod fleet {
            #[test]
            fn replicas_started_together_as_pid_1_never_share_a_task_id() {
                $crate::run($bin, $crate::suite::fleet::replicas_started_together_as_pid_1_never_share_a_task_id);
            }
            #[test]
            fn a_foreign_cancel_is_refused_and_the_owners_call_runs_on() {
                $crate::run($bin, $crate::suite::fleet::a_foreign_cancel_is_refused_and_the_owners_call_runs_on);
            }
            #[test]
            fn a_store_that_stalls_never_counts_a_call_twice() {
                $crate::run($bin, $crate::suite::fleet::a_store_that_stalls_never_counts_a_call_twice);
            }
            #[test]
            fn a_store_password_of_any_characters_is_never_shown() {
                $crate::run($bin, $crate::suite::fleet::a_store_password_of_any_characters_is_never_shown);
            }
            #[test]
            fn a_store_without_the_task_secret_refuses_to_start() {
                $crate::run($bin, $crate::suite::fleet::a_store_without_the_task_secret_refuses_to_start);
            }
            #[test]
            fn ready_is_right_from_the_first_request() {
                $crate::run($bin, $crate::suite::fleet::ready_is_right_from_the_first_request);
            }
            #[test]
            fn a_call_cancelled_mid_stream_is_charged() {
                $crate::run($bin, $crate::suite::fleet::a_call_cancelled_mid_stream_is_charged);
            }
            #[test]
            fn unauthenticated_bodies_are_not_read_before_the_token() {
                $crate::run($bin, $crate::suite::fleet::unauthenticated_bodies_are_not_read_before_the_token);
            }
            #[test]
            fn readiness_comes_back_with_the_identity_provider() {
                $crate::run($bin, $crate::suite::fleet::readiness_comes_back_with_the_identity_provider);
            }
            #[test]
            fn a_long_identity_owns_its_background_tasks_and_their_cost() {
                $crate::run($bin, $crate::suite::fleet::a_long_identity_owns_its_background_tasks_and_their_cost);
            }
            #[test]
            fn oauth_mode_reads_the_mcp_url_and_keeps_metrics_to_operators() {
                $crate::run($bin, $crate::suite::fleet::oauth_mode_reads_the_mcp_url_and_keeps_metrics_to_operators);
            }
        }
        mod doctor {
            #[test]
            fn doctor_is_all_green_against_a_working_provider() {
                $crate::run($bin, $crate::suite::doctor::doctor_is_all_green_against_a_working_provider);
            }
            #[test]
            fn doctor_describes_the_perplexity_and_parallel_presets() {
                $crate::run($bin, $crate::suite::doctor::doctor_describes_the_perplexity_and_parallel_presets);
            }
            #[test]
            fn doctor_checks_tls_with_the_configured_ca_and_says_when_it_is_not_trusted() {
                $crate::run($bin, $crate::suite::doctor::doctor_checks_tls_with_the_configured_ca_and_says_when_it_is_not_trusted);
            }
            #[test]
            fn another_services_key_bound_for_openai_refuses_to_start_and_doctor_says_so() {
                $crate::run($bin, $crate::suite::doctor::another_services_key_bound_for_openai_refuses_to_start_and_doctor_says_so);
            }
            #[test]
            fn doctor_fails_without_the_key_naming_the_variable() {
                $crate::run($bin, $crate::suite::doctor::doctor_fails_without_the_key_naming_the_variable);
            }
            #[test]
            fn doctor_reports_a_name_that_does_not_resolve() {
                $crate::run($bin, $crate::suite::doctor::doctor_reports_a_name_that_does_not_resolve);
            }
            #[test]
            fn doctor_names_the_setting_of_an_unknown_model() {
                $crate::run($bin, $crate::suite::doctor::doctor_names_the_setting_of_an_unknown_model);
            }
            #[test]
            fn doctor_json_has_one_entry_per_check() {
                $crate::run($bin, $crate::suite::doctor::doctor_json_has_one_entry_per_check);
            }
        }
        mod models {
            #[test]
            fn a_past_provider_date_refuses_calls_before_any_request() {
                $crate::run($bin, $crate::suite::models::a_past_provider_date_refuses_calls_before_any_request);
            }
            #[test]
            fn a_date_within_30_days_is_warned_about_once_and_calls_go_on() {
                $crate::run($bin, $crate::suite::models::a_date_within_30_days_is_warned_about_once_and_calls_go_on);
            }
            #[test]
            fn a_far_null_or_missing_date_or_a_hung_lookup_changes_nothing() {
                $crate::run($bin, $crate::suite::models::a_far_null_or_missing_date_or_a_hung_lookup_changes_nothing);
            }
            #[test]
            fn without_lookups_the_provider_is_not_asked() {
                $crate::run($bin, $crate::suite::models::without_lookups_the_provider_is_not_asked);
            }
        }
        mod providers {
            #[test]
            fn azure_sends_the_key_in_an_api_key_header_with_web_search() {
                $crate::run($bin, $crate::suite::providers::azure_sends_the_key_in_an_api_key_header_with_web_search);
            }
            #[test]
            fn openrouter_uses_its_key_model_names_and_search_tool() {
                $crate::run($bin, $crate::suite::providers::openrouter_uses_its_key_model_names_and_search_tool);
            }
            #[test]
            fn local_providers_need_no_key_send_no_tool_and_say_so() {
                $crate::run($bin, $crate::suite::providers::local_providers_need_no_key_send_no_tool_and_say_so);
            }
            #[test]
            fn openai_is_unchanged_and_show_config_names_preset_values() {
                $crate::run($bin, $crate::suite::providers::openai_is_unchanged_and_show_config_names_preset_values);
            }
            #[test]
            fn profile_tuning_reaches_the_request() {
                $crate::run($bin, $crate::suite::providers::profile_tuning_reaches_the_request);
            }
            #[test]
            fn a_retired_model_warns_at_startup_and_a_404_says_what_to_set() {
                $crate::run($bin, $crate::suite::providers::a_retired_model_warns_at_startup_and_a_404_says_what_to_set);
            }
            #[test]
            fn perplexity_is_asked_in_its_shape_and_its_sources_and_cost_come_back() {
                $crate::run($bin, $crate::suite::providers::perplexity_is_asked_in_its_shape_and_its_sources_and_cost_come_back);
            }
            #[test]
            fn openai_org_and_project_never_go_with_another_services_key() {
                $crate::run($bin, $crate::suite::providers::openai_org_and_project_never_go_with_another_services_key);
            }
            #[test]
            fn parallel_is_asked_without_a_tool_and_priced_per_request_by_effort() {
                $crate::run($bin, $crate::suite::providers::parallel_is_asked_without_a_tool_and_priced_per_request_by_effort);
            }
            #[test]
            fn a_whole_answer_slower_than_the_idle_timeout_is_waited_for() {
                $crate::run($bin, $crate::suite::providers::a_whole_answer_slower_than_the_idle_timeout_is_waited_for);
            }
            #[test]
            fn failures_name_the_service_that_failed() {
                $crate::run($bin, $crate::suite::providers::failures_name_the_service_that_failed);
            }
            #[test]
            fn the_new_presets_show_their_values_and_refuse_what_their_api_lacks() {
                $crate::run($bin, $crate::suite::providers::the_new_presets_show_their_values_and_refuse_what_their_api_lacks);
            }
            #[test]
            fn a_presets_key_does_not_follow_openai_base_url() {
                $crate::run($bin, $crate::suite::providers::a_presets_key_does_not_follow_openai_base_url);
            }
            #[test]
            fn a_presets_key_in_plain_http_to_another_machine_is_warned_about() {
                $crate::run($bin, $crate::suite::providers::a_presets_key_in_plain_http_to_another_machine_is_warned_about);
            }
        }
        mod traces {
            #[test]
            fn a_retried_call_and_a_refused_call_are_traced_over_stdio() {
                $crate::run($bin, $crate::suite::traces::a_retried_call_and_a_refused_call_are_traced_over_stdio);
            }
            #[test]
            fn an_http_call_continues_the_traceparent_header() {
                $crate::run($bin, $crate::suite::traces::an_http_call_continues_the_traceparent_header);
            }
            #[test]
            fn nothing_is_exported_without_the_variables_or_when_disabled() {
                $crate::run($bin, $crate::suite::traces::nothing_is_exported_without_the_variables_or_when_disabled);
            }
            #[test]
            fn a_dead_collector_changes_no_reply() {
                $crate::run($bin, $crate::suite::traces::a_dead_collector_changes_no_reply);
            }
            #[test]
            fn a_collector_that_never_answers_costs_one_batch_and_it_is_counted() {
                $crate::run($bin, $crate::suite::traces::a_collector_that_never_answers_costs_one_batch_and_it_is_counted);
            }
            #[test]
            fn key_fetches_of_the_identity_provider_are_traced() {
                $crate::run($bin, $crate::suite::traces::key_fetches_of_the_identity_provider_are_traced);
            }
        }
        mod dashboard {
            #[test]
            fn every_dashboard_query_runs_on_prometheus_and_the_panels_have_data() {
                $crate::run($bin, $crate::suite::dashboard::every_dashboard_query_runs_on_prometheus_and_the_panels_have_data);
            }
        }
        mod observability {
            #[test]
            fn json_logs_give_one_line_per_call_with_the_trace_and_no_secret() {
                $crate::run($bin, $crate::suite::observability::json_logs_give_one_line_per_call_with_the_trace_and_no_secret);
            }
            #[test]
            fn metrics_count_what_was_done_in_prometheus_text() {
                $crate::run($bin, $crate::suite::observability::metrics_count_what_was_done_in_prometheus_text);
            }
            #[test]
            fn a_stdio_server_serves_metrics_on_its_own_listener() {
                $crate::run($bin, $crate::suite::observability::a_stdio_server_serves_metrics_on_its_own_listener);
            }
            #[test]
            fn a_refused_call_and_an_http_call_have_their_lines() {
                $crate::run($bin, $crate::suite::observability::a_refused_call_and_an_http_call_have_their_lines);
            }
            #[test]
            fn a_background_task_leaves_one_line_when_it_ends() {
                $crate::run($bin, $crate::suite::observability::a_background_task_leaves_one_line_when_it_ends);
            }
            #[test]
            fn every_method_in_both_eras_is_counted_once() {
                $crate::run($bin, $crate::suite::observability::every_method_in_both_eras_is_counted_once);
            }
        }
        mod caps {
            #[test]
            fn a_burst_under_a_daily_cap_reaches_openai_once() {
                $crate::run($bin, $crate::suite::caps::a_burst_under_a_daily_cap_reaches_openai_once);
            }
            #[test]
            fn a_burst_of_background_tasks_under_a_daily_cap_starts_one_run() {
                $crate::run($bin, $crate::suite::caps::a_burst_of_background_tasks_under_a_daily_cap_starts_one_run);
            }
            #[test]
            fn a_burst_across_two_instances_sharing_a_store_reaches_openai_once() {
                $crate::run($bin, $crate::suite::caps::a_burst_across_two_instances_sharing_a_store_reaches_openai_once);
            }
            #[test]
            fn a_cancelled_call_is_charged_from_its_own_clients_calls() {
                $crate::run($bin, $crate::suite::caps::a_cancelled_call_is_charged_from_its_own_clients_calls);
            }
            #[test]
            fn a_killed_replicas_hold_lapses_in_the_store() {
                $crate::run($bin, $crate::suite::caps::a_killed_replicas_hold_lapses_in_the_store);
            }
            #[test]
            fn a_drained_replicas_last_spend_and_unhold_reach_the_store() {
                $crate::run($bin, $crate::suite::caps::a_drained_replicas_last_spend_and_unhold_reach_the_store);
            }
            #[test]
            fn a_store_that_lost_its_keys_keeps_later_holds() {
                $crate::run($bin, $crate::suite::caps::a_store_that_lost_its_keys_keeps_later_holds);
            }
        }
        mod limits {
            #[test]
            fn named_clients_are_told_apart_and_their_limits_refuse_then_recover() {
                $crate::run($bin, $crate::suite::limits::named_clients_are_told_apart_and_their_limits_refuse_then_recover);
            }
            #[test]
            fn each_named_client_sees_only_its_own_tasks() {
                $crate::run($bin, $crate::suite::limits::each_named_client_sees_only_its_own_tasks);
            }
            #[test]
            fn the_instance_limit_holds_stdio_calls_in_every_era() {
                $crate::run($bin, $crate::suite::limits::the_instance_limit_holds_stdio_calls_in_every_era);
            }
            #[test]
            fn the_instance_spend_limit_holds_until_the_utc_day_ends() {
                $crate::run($bin, $crate::suite::limits::the_instance_spend_limit_holds_until_the_utc_day_ends);
            }
            #[test]
            fn background_tasks_are_charged_read_or_not_under_a_spend_cap() {
                $crate::run($bin, $crate::suite::limits::background_tasks_are_charged_read_or_not_under_a_spend_cap);
            }
        }
        mod cost {
            #[test]
            fn a_tasks_flex_lane_is_sent_priced_and_falls_back_as_configured() {
                $crate::run($bin, $crate::suite::cost::a_tasks_flex_lane_is_sent_priced_and_falls_back_as_configured);
            }
            #[test]
            fn a_model_that_refuses_flex_is_not_sent_flex_again() {
                $crate::run($bin, $crate::suite::cost::a_model_that_refuses_flex_is_not_sent_flex_again);
            }
            #[test]
            fn each_call_reports_its_cost_at_the_built_in_prices() {
                $crate::run($bin, $crate::suite::cost::each_call_reports_its_cost_at_the_built_in_prices);
            }
            #[test]
            fn configured_prices_win_and_an_unpriced_model_says_what_to_set() {
                $crate::run($bin, $crate::suite::cost::configured_prices_win_and_an_unpriced_model_says_what_to_set);
            }
            #[test]
            fn a_cancelled_call_is_charged_its_profiles_recent_cost() {
                $crate::run($bin, $crate::suite::cost::a_cancelled_call_is_charged_its_profiles_recent_cost);
            }
        }
        mod answers {
            #[test]
            fn http_404_question_answers_without_search() {
                $crate::run($bin, $crate::suite::answers::http_404_question_answers_without_search);
            }
            #[test]
            fn tokyo_weather_answers_with_search_citations_and_dates() {
                $crate::run($bin, $crate::suite::answers::tokyo_weather_answers_with_search_citations_and_dates);
            }
            #[test]
            fn rate_limit_then_success_honours_retry_after() {
                $crate::run($bin, $crate::suite::answers::rate_limit_then_success_honours_retry_after);
            }
            #[test]
            fn server_errors_until_retries_run_out() {
                $crate::run($bin, $crate::suite::answers::server_errors_until_retries_run_out);
            }
            #[test]
            fn a_silent_upstream_times_out_and_its_connection_is_closed() {
                $crate::run($bin, $crate::suite::answers::a_silent_upstream_times_out_and_its_connection_is_closed);
            }
            #[test]
            fn malformed_and_incomplete_bodies_are_clear_errors() {
                $crate::run($bin, $crate::suite::answers::malformed_and_incomplete_bodies_are_clear_errors);
            }
            #[test]
            fn japanese_answer_with_citations_after_multibyte_text() {
                $crate::run($bin, $crate::suite::answers::japanese_answer_with_citations_after_multibyte_text);
            }
            #[test]
            fn model_families_get_only_the_parameters_they_take() {
                $crate::run($bin, $crate::suite::answers::model_families_get_only_the_parameters_they_take);
            }
            #[test]
            fn a_refused_effort_is_clamped_once_and_remembered() {
                $crate::run($bin, $crate::suite::answers::a_refused_effort_is_clamped_once_and_remembered);
            }
            #[test]
            fn without_an_api_key_tools_list_works_and_calls_fail_at_once() {
                $crate::run($bin, $crate::suite::answers::without_an_api_key_tools_list_works_and_calls_fail_at_once);
            }
            #[test]
            fn connections_are_reused_and_org_headers_sent() {
                $crate::run($bin, $crate::suite::answers::connections_are_reused_and_org_headers_sent);
            }
            #[test]
            fn invalid_arguments_are_reported_with_the_reason() {
                $crate::run($bin, $crate::suite::answers::invalid_arguments_are_reported_with_the_reason);
            }
            #[test]
            fn requests_go_through_http_proxy_and_no_proxy_bypasses_it() {
                $crate::run($bin, $crate::suite::answers::requests_go_through_http_proxy_and_no_proxy_bypasses_it);
            }
            #[test]
            fn https_with_a_trusted_ca_carries_large_answers_over_kept_alive_connections() {
                $crate::run($bin, $crate::suite::answers::https_with_a_trusted_ca_carries_large_answers_over_kept_alive_connections);
            }
            #[test]
            fn chunked_bodies_are_decoded_over_http_and_https() {
                $crate::run($bin, $crate::suite::answers::chunked_bodies_are_decoded_over_http_and_https);
            }
            #[test]
            fn a_kept_alive_connection_the_server_closed_is_replaced_quietly() {
                $crate::run($bin, $crate::suite::answers::a_kept_alive_connection_the_server_closed_is_replaced_quietly);
            }
            #[test]
            fn https_with_an_untrusted_certificate_fails_with_a_tls_hint() {
                $crate::run($bin, $crate::suite::answers::https_with_an_untrusted_certificate_fails_with_a_tls_hint);
            }
        }
        mod bad_upstream {
            #[test]
            fn upstream_non_json_body() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_non_json_body);
            }
            #[test]
            fn upstream_html_error_page() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_html_error_page);
            }
            #[test]
            fn upstream_ok_status_carrying_an_error_object() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_ok_status_carrying_an_error_object);
            }
            #[test]
            fn an_upstream_error_is_passed_on_without_key_fragments() {
                $crate::run($bin, $crate::suite::bad_upstream::an_upstream_error_is_passed_on_without_key_fragments);
            }
            #[test]
            fn upstream_truncated_body_and_reset_mid_body() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_truncated_body_and_reset_mid_body);
            }
            #[test]
            fn upstream_body_of_fifty_megabytes() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_body_of_fifty_megabytes);
            }
            #[test]
            fn upstream_that_accepts_and_never_answers() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_that_accepts_and_never_answers);
            }
            #[test]
            fn upstream_sending_a_byte_at_a_time() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_sending_a_byte_at_a_time);
            }
            #[test]
            fn upstream_redirect_is_not_followed() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_redirect_is_not_followed);
            }
            #[test]
            fn upstream_tls_failure() {
                $crate::run($bin, $crate::suite::bad_upstream::upstream_tls_failure);
            }
        }
        mod concurrency {
            #[test]
            fn cancel_closes_the_upstream_connection_and_suppresses_the_reply() {
                $crate::run($bin, $crate::suite::concurrency::cancel_closes_the_upstream_connection_and_suppresses_the_reply);
            }
            #[test]
            fn cancel_during_backoff_stops_further_attempts() {
                $crate::run($bin, $crate::suite::concurrency::cancel_during_backoff_stops_further_attempts);
            }
            #[test]
            fn two_hundred_concurrent_calls_each_answered_once_within_the_cap() {
                $crate::run($bin, $crate::suite::concurrency::two_hundred_concurrent_calls_each_answered_once_within_the_cap);
            }
            #[test]
            fn a_duplicate_in_flight_id_is_refused_and_the_first_call_completes() {
                $crate::run($bin, $crate::suite::concurrency::a_duplicate_in_flight_id_is_refused_and_the_first_call_completes);
            }
            #[test]
            fn eof_lets_calls_in_flight_finish_then_exits_zero() {
                $crate::run($bin, $crate::suite::concurrency::eof_lets_calls_in_flight_finish_then_exits_zero);
            }
            #[test]
            fn sigterm_aborts_calls_and_exits_zero_promptly() {
                $crate::run($bin, $crate::suite::concurrency::sigterm_aborts_calls_and_exits_zero_promptly);
            }
            #[test]
            fn progress_notifications_increase_and_stop_before_the_reply() {
                $crate::run($bin, $crate::suite::concurrency::progress_notifications_increase_and_stop_before_the_reply);
            }
        }
        mod config {
            #[test]
            fn cli_beats_env_beats_yaml_at_the_upstream() {
                $crate::run($bin, $crate::suite::config::cli_beats_env_beats_yaml_at_the_upstream);
            }
            #[test]
            fn show_config_alone_prints_sources_and_exits() {
                $crate::run($bin, $crate::suite::config::show_config_alone_prints_sources_and_exits);
            }
            #[test]
            fn show_config_with_stdio_keeps_serving_on_a_clean_stdout() {
                $crate::run($bin, $crate::suite::config::show_config_with_stdio_keeps_serving_on_a_clean_stdout);
            }
            #[test]
            fn startup_errors_name_the_problem_and_exit_non_zero() {
                $crate::run($bin, $crate::suite::config::startup_errors_name_the_problem_and_exit_non_zero);
            }
            #[test]
            fn unknown_keys_warn_and_missing_files_are_skipped() {
                $crate::run($bin, $crate::suite::config::unknown_keys_warn_and_missing_files_are_skipped);
            }
            #[test]
            fn the_xdg_location_is_read() {
                $crate::run($bin, $crate::suite::config::the_xdg_location_is_read);
            }
            #[test]
            fn debug_log_goes_to_stderr_and_file_without_secrets() {
                $crate::run($bin, $crate::suite::config::debug_log_goes_to_stderr_and_file_without_secrets);
            }
            #[test]
            fn the_api_key_never_appears_on_any_path() {
                $crate::run($bin, $crate::suite::config::the_api_key_never_appears_on_any_path);
            }
        }
        mod eras {
            #[test]
            fn claude_code_sequence_discover_then_initialize_then_both_eras() {
                $crate::run($bin, $crate::suite::eras::claude_code_sequence_discover_then_initialize_then_both_eras);
            }
            #[test]
            fn a_probe_followed_by_eof_is_answered_and_the_server_exits() {
                $crate::run($bin, $crate::suite::eras::a_probe_followed_by_eof_is_answered_and_the_server_exits);
            }
            #[test]
            fn modern_envelope_errors_and_removed_methods() {
                $crate::run($bin, $crate::suite::eras::modern_envelope_errors_and_removed_methods);
            }
            #[test]
            fn subscriptions_are_acknowledged_cancelled_and_closed_at_eof() {
                $crate::run($bin, $crate::suite::eras::subscriptions_are_acknowledged_cancelled_and_closed_at_eof);
            }
            #[test]
            fn modern_tool_failures_are_results_that_say_what_to_do() {
                $crate::run($bin, $crate::suite::eras::modern_tool_failures_are_results_that_say_what_to_do);
            }
            #[test]
            fn arguments_as_models_send_them_reach_openai_as_meant() {
                $crate::run($bin, $crate::suite::eras::arguments_as_models_send_them_reach_openai_as_meant);
            }
            #[test]
            fn notifications_are_never_answered_whatever_their_params() {
                $crate::run($bin, $crate::suite::eras::notifications_are_never_answered_whatever_their_params);
            }
            #[test]
            fn a_second_byte_order_mark_gives_the_same_reply_however_stdin_is_split() {
                $crate::run($bin, $crate::suite::eras::a_second_byte_order_mark_gives_the_same_reply_however_stdin_is_split);
            }
            #[test]
            fn modern_calls_report_progress_and_can_be_cancelled() {
                $crate::run($bin, $crate::suite::eras::modern_calls_report_progress_and_can_be_cancelled);
            }
        }
        mod lifecycle {
            #[test]
            fn handshake_list_and_ping_then_eof_exits_zero() {
                $crate::run($bin, $crate::suite::lifecycle::handshake_list_and_ping_then_eof_exits_zero);
            }
            #[test]
            fn negotiates_every_supported_version_and_answers_unknown_with_the_latest() {
                $crate::run($bin, $crate::suite::lifecycle::negotiates_every_supported_version_and_answers_unknown_with_the_latest);
            }
            #[test]
            fn broken_frames_are_answered_and_serving_continues() {
                $crate::run($bin, $crate::suite::lifecycle::broken_frames_are_answered_and_serving_continues);
            }
            #[test]
            fn oversized_message_is_refused_and_the_next_served() {
                $crate::run($bin, $crate::suite::lifecycle::oversized_message_is_refused_and_the_next_served);
            }
            #[test]
            fn nothing_is_written_before_the_first_message() {
                $crate::run($bin, $crate::suite::lifecycle::nothing_is_written_before_the_first_message);
            }
            #[test]
            fn requests_before_initialize_get_prompt_errors() {
                $crate::run($bin, $crate::suite::lifecycle::requests_before_initialize_get_prompt_errors);
            }
            #[test]
            fn batches_are_answered_as_arrays_in_2025_03_26_only() {
                $crate::run($bin, $crate::suite::lifecycle::batches_are_answered_as_arrays_in_2025_03_26_only);
            }
            #[test]
            fn line_mode_env_forces_newline_replies() {
                $crate::run($bin, $crate::suite::lifecycle::line_mode_env_forces_newline_replies);
            }
            #[test]
            fn bom_crlf_and_blank_lines_are_tolerated() {
                $crate::run($bin, $crate::suite::lifecycle::bom_crlf_and_blank_lines_are_tolerated);
            }
            #[test]
            fn help_version_and_bad_flags() {
                $crate::run($bin, $crate::suite::lifecycle::help_version_and_bad_flags);
            }
            #[test]
            fn closed_stdout_exits_quietly() {
                $crate::run($bin, $crate::suite::lifecycle::closed_stdout_exits_quietly);
            }
            #[test]
            fn garbage_and_an_endless_line_keep_memory_bounded() {
                $crate::run($bin, $crate::suite::lifecycle::garbage_and_an_endless_line_keep_memory_bounded);
            }
        }
        mod proxies {
            #[test]
            fn https_proxy_carries_tls_to_the_origin_inside_tls_to_the_proxy() {
                $crate::run($bin, $crate::suite::proxies::https_proxy_carries_tls_to_the_origin_inside_tls_to_the_proxy);
            }
            #[test]
            fn https_proxy_tunnels_a_plain_http_origin() {
                $crate::run($bin, $crate::suite::proxies::https_proxy_tunnels_a_plain_http_origin);
            }
            #[test]
            fn socks5h_with_credentials_lets_the_proxy_resolve_the_name() {
                $crate::run($bin, $crate::suite::proxies::socks5h_with_credentials_lets_the_proxy_resolve_the_name);
            }
            #[test]
            fn socks5_resolves_locally_and_carries_tls() {
                $crate::run($bin, $crate::suite::proxies::socks5_resolves_locally_and_carries_tls);
            }
            #[test]
            fn socks5_with_a_wrong_password_fails_clearly_and_keeps_serving() {
                $crate::run($bin, $crate::suite::proxies::socks5_with_a_wrong_password_fails_clearly_and_keeps_serving);
            }
            #[test]
            fn a_plain_http_origin_on_this_machine_never_goes_through_a_proxy() {
                $crate::run($bin, $crate::suite::proxies::a_plain_http_origin_on_this_machine_never_goes_through_a_proxy);
            }
            #[test]
            fn show_config_names_the_proxy_without_its_credentials() {
                $crate::run($bin, $crate::suite::proxies::show_config_names_the_proxy_without_its_credentials);
            }
        }
        mod sdks {
            #[test]
            fn typescript_sdk_1_x_tasks_with_openai_background() {
                $crate::run($bin, $crate::suite::sdks::typescript_sdk_1_x_tasks_with_openai_background);
            }
            #[test]
            fn typescript_sdk_1_x_tasks_over_stdio() {
                $crate::run($bin, $crate::suite::sdks::typescript_sdk_1_x_tasks_over_stdio);
            }
            #[test]
            fn python_sdk_over_http_lists_calls_with_progress_and_cancels() {
                $crate::run($bin, $crate::suite::sdks::python_sdk_over_http_lists_calls_with_progress_and_cancels);
            }
            #[test]
            fn python_sdk_over_http_in_legacy_mode() {
                $crate::run($bin, $crate::suite::sdks::python_sdk_over_http_in_legacy_mode);
            }
            #[test]
            fn typescript_sdk_v2_over_http_lists_calls_with_progress_and_cancels() {
                $crate::run($bin, $crate::suite::sdks::typescript_sdk_v2_over_http_lists_calls_with_progress_and_cancels);
            }
            #[test]
            fn typescript_sdk_1_x_over_http_lists_calls_with_progress_and_cancels() {
                $crate::run($bin, $crate::suite::sdks::typescript_sdk_1_x_over_http_lists_calls_with_progress_and_cancels);
            }
            #[test]
            fn python_sdk_in_its_default_probing_mode_ends_modern() {
                $crate::run($bin, $crate::suite::sdks::python_sdk_in_its_default_probing_mode_ends_modern);
            }
            #[test]
            fn python_sdk_pinned_to_2026_07_28() {
                $crate::run($bin, $crate::suite::sdks::python_sdk_pinned_to_2026_07_28);
            }
            #[test]
            fn python_sdk_in_legacy_mode_negotiates_2025_11_25() {
                $crate::run($bin, $crate::suite::sdks::python_sdk_in_legacy_mode_negotiates_2025_11_25);
            }
            #[test]
            fn typescript_sdk_v2_in_auto_mode_ends_modern() {
                $crate::run($bin, $crate::suite::sdks::typescript_sdk_v2_in_auto_mode_ends_modern);
            }
            #[test]
            fn typescript_sdk_v2_pinned_to_2026_07_28() {
                $crate::run($bin, $crate::suite::sdks::typescript_sdk_v2_pinned_to_2026_07_28);
            }
            #[test]
            fn typescript_sdk_1_x_legacy_client() {
                $crate::run($bin, $crate::suite::sdks::typescript_sdk_1_x_legacy_client);
            }
        }
        mod streaming {
            #[test]
            fn a_streamed_answer_equals_the_whole_answer() {
                $crate::run($bin, $crate::suite::streaming::a_streamed_answer_equals_the_whole_answer);
            }
            #[test]
            fn a_slow_stream_with_keepalives_reports_progress_then_answers() {
                $crate::run($bin, $crate::suite::streaming::a_slow_stream_with_keepalives_reports_progress_then_answers);
            }
            #[test]
            fn a_rate_limit_inside_the_stream_is_retried_then_answered() {
                $crate::run($bin, $crate::suite::streaming::a_rate_limit_inside_the_stream_is_retried_then_answered);
            }
            #[test]
            fn a_stream_cut_mid_way_is_retried_on_a_new_connection() {
                $crate::run($bin, $crate::suite::streaming::a_stream_cut_mid_way_is_retried_on_a_new_connection);
            }
            #[test]
            fn quota_inside_the_stream_is_reported_at_once() {
                $crate::run($bin, $crate::suite::streaming::quota_inside_the_stream_is_reported_at_once);
            }
            #[test]
            fn cancel_mid_stream_closes_the_connection_at_once() {
                $crate::run($bin, $crate::suite::streaming::cancel_mid_stream_closes_the_connection_at_once);
            }
            #[test]
            fn streamed_calls_keep_the_connection_alive() {
                $crate::run($bin, $crate::suite::streaming::streamed_calls_keep_the_connection_alive);
            }
        }
        mod http {
            #[test]
            fn both_eras_are_served_without_sessions() {
                $crate::run($bin, $crate::suite::http::both_eras_are_served_without_sessions);
            }
            #[test]
            fn progress_streams_as_server_sent_events_then_the_reply() {
                $crate::run($bin, $crate::suite::http::progress_streams_as_server_sent_events_then_the_reply);
            }
            #[test]
            fn a_client_that_disconnects_cancels_its_call() {
                $crate::run($bin, $crate::suite::http::a_client_that_disconnects_cancels_its_call);
            }
            #[test]
            fn a_cancel_posted_on_another_connection_ends_the_stream_cleanly() {
                $crate::run($bin, $crate::suite::http::a_cancel_posted_on_another_connection_ends_the_stream_cleanly);
            }
            #[test]
            fn host_origin_and_token_are_enforced_and_the_token_never_echoed() {
                $crate::run($bin, $crate::suite::http::host_origin_and_token_are_enforced_and_the_token_never_echoed);
            }
            #[test]
            fn a_reachable_address_without_a_token_refuses_to_start() {
                $crate::run($bin, $crate::suite::http::a_reachable_address_without_a_token_refuses_to_start);
            }
            #[test]
            fn hostile_requests_get_their_status_and_the_server_keeps_serving() {
                $crate::run($bin, $crate::suite::http::hostile_requests_get_their_status_and_the_server_keeps_serving);
            }
            #[test]
            fn a_silent_connection_closes_at_the_request_timeout_not_the_idle_one() {
                $crate::run($bin, $crate::suite::http::a_silent_connection_closes_at_the_request_timeout_not_the_idle_one);
            }
            #[test]
            fn smuggling_ingredients_are_refused_and_every_close_says_so() {
                $crate::run($bin, $crate::suite::http::smuggling_ingredients_are_refused_and_every_close_says_so);
            }
            #[test]
            fn connections_beyond_the_limit_get_503_and_a_thousand_idle_ones_block_nobody() {
                $crate::run($bin, $crate::suite::http::connections_beyond_the_limit_get_503_and_a_thousand_idle_ones_block_nobody);
            }
            #[test]
            fn a_client_that_never_reads_is_dropped_and_blocks_nobody() {
                $crate::run($bin, $crate::suite::http::a_client_that_never_reads_is_dropped_and_blocks_nobody);
            }
            #[test]
            fn a_listen_whose_client_left_behind_a_full_pipeline_is_forgotten() {
                $crate::run($bin, $crate::suite::http::a_listen_whose_client_left_behind_a_full_pipeline_is_forgotten);
            }
            #[test]
            fn sigterm_stops_accepting_finishes_calls_in_flight_and_exits_zero() {
                $crate::run($bin, $crate::suite::http::sigterm_stops_accepting_finishes_calls_in_flight_and_exits_zero);
            }
        }
        mod scale_out {
            #[test]
            fn a_background_task_created_on_one_instance_is_fetched_from_the_other() {
                $crate::run($bin, $crate::suite::scale_out::a_background_task_created_on_one_instance_is_fetched_from_the_other);
            }
            #[test]
            fn two_instances_behind_nginx_serve_one_client_alternately() {
                $crate::run($bin, $crate::suite::scale_out::two_instances_behind_nginx_serve_one_client_alternately);
            }
        }
        mod oauth {
            #[test]
            fn tokens_of_a_real_identity_provider_are_checked_as_the_specifications_say() {
                $crate::run($bin, $crate::suite::oauth::tokens_of_a_real_identity_provider_are_checked_as_the_specifications_say);
            }
            #[test]
            fn a_provider_that_cannot_be_reached_is_a_503_and_static_tokens_still_work() {
                $crate::run($bin, $crate::suite::oauth::a_provider_that_cannot_be_reached_is_a_503_and_static_tokens_still_work);
            }
            #[test]
            fn the_typescript_sdks_sign_in_with_client_credentials_alone() {
                $crate::run($bin, $crate::suite::oauth::the_typescript_sdks_sign_in_with_client_credentials_alone);
            }
            #[test]
            fn each_identity_has_its_own_limits_and_metric_label() {
                $crate::run($bin, $crate::suite::oauth::each_identity_has_its_own_limits_and_metric_label);
            }
            #[test]
            fn claude_code_needs_a_client_id_for_a_provider_without_registration() {
                $crate::run($bin, $crate::suite::oauth::claude_code_needs_a_client_id_for_a_provider_without_registration);
            }
        }
        mod store {
            #[test]
            fn two_instances_share_limits_through_redis_and_outlive_its_outage() {
                $crate::run($bin, $crate::suite::store::two_instances_share_limits_through_redis_and_outlive_its_outage);
            }
            #[test]
            fn the_store_password_is_never_shown_and_a_bad_url_says_why() {
                $crate::run($bin, $crate::suite::store::the_store_password_is_never_shown_and_a_bad_url_says_why);
            }
            #[test]
            fn a_draining_replica_stores_what_it_finishes_and_fails_what_it_cannot() {
                $crate::run($bin, $crate::suite::lease::a_draining_replica_stores_what_it_finishes_and_fails_what_it_cannot);
            }
            #[test]
            fn a_killed_replicas_task_is_ended_within_30_s_on_the_other() {
                $crate::run($bin, $crate::suite::lease::a_killed_replicas_task_is_ended_within_30_s_on_the_other);
            }
            #[test]
            fn a_frozen_replica_that_comes_back_does_not_revive_its_ended_task() {
                $crate::run($bin, $crate::suite::lease::a_frozen_replica_that_comes_back_does_not_revive_its_ended_task);
            }
            #[test]
            fn tasks_and_cancels_reach_across_instances_through_redis() {
                $crate::run($bin, $crate::suite::store::tasks_and_cancels_reach_across_instances_through_redis);
            }
            #[test]
            fn a_held_task_call_cancelled_on_another_instance_stops_unanswered() {
                $crate::run($bin, $crate::suite::store::a_held_task_call_cancelled_on_another_instance_stops_unanswered);
            }
            #[test]
            fn a_killed_replicas_background_task_is_answered_by_another_and_charged_once() {
                $crate::run($bin, $crate::suite::store::a_killed_replicas_background_task_is_answered_by_another_and_charged_once);
            }
            #[test]
            fn a_run_nobody_reads_after_its_replica_died_is_swept_and_charged_once() {
                $crate::run($bin, $crate::suite::store::a_run_nobody_reads_after_its_replica_died_is_swept_and_charged_once);
            }
            #[test]
            fn finished_tasks_outlive_a_store_restart_with_aof() {
                $crate::run($bin, $crate::suite::store::finished_tasks_outlive_a_store_restart_with_aof);
            }
            #[test]
            fn behind_nginx_limits_and_tasks_hold_across_instances() {
                $crate::run($bin, $crate::suite::store::behind_nginx_limits_and_tasks_hold_across_instances);
            }
            #[test]
            fn a_rediss_store_is_reached_over_tls_with_the_upstream_roots() {
                $crate::run($bin, $crate::suite::store::a_rediss_store_is_reached_over_tls_with_the_upstream_roots);
            }
        }
        mod tasks {
            #[test]
            fn a_background_task_survives_a_restart_of_the_server() {
                $crate::run($bin, $crate::suite::tasks::a_background_task_survives_a_restart_of_the_server);
            }
            #[test]
            fn cancelling_a_background_task_cancels_the_openai_response() {
                $crate::run($bin, $crate::suite::tasks::cancelling_a_background_task_cancels_the_openai_response);
            }

            #[test]
            fn a_completion_window_is_asked_of_openai_and_fits_the_task() {
                $crate::run($bin, $crate::suite::tasks::a_completion_window_is_asked_of_openai_and_fits_the_task);
            }

            #[test]
            fn a_tool_error_ends_a_task_as_each_era_says() {
                $crate::run($bin, $crate::suite::tasks::a_tool_error_ends_a_task_as_each_era_says);
            }

            #[test]
            fn every_way_a_background_response_ends_ends_its_task() {
                $crate::run($bin, $crate::suite::tasks::every_way_a_background_response_ends_ends_its_task);
            }

            #[test]
            fn background_reads_stay_paced_while_openai_fails() {
                $crate::run($bin, $crate::suite::tasks::background_reads_stay_paced_while_openai_fails);
            }

            #[test]
            fn background_creates_take_max_inflight_slots() {
                $crate::run($bin, $crate::suite::tasks::background_creates_take_max_inflight_slots);
            }

            #[test]
            fn a_429_with_retry_after_on_a_create_is_honoured() {
                $crate::run($bin, $crate::suite::tasks::a_429_with_retry_after_on_a_create_is_honoured);
            }
            #[test]
            fn a_task_over_stdio_is_created_polled_fetched_and_announced() {
                $crate::run($bin, $crate::suite::tasks::a_task_over_stdio_is_created_polled_fetched_and_announced);
            }
            #[test]
            fn cancelling_a_working_task_closes_its_upstream_connection() {
                $crate::run($bin, $crate::suite::tasks::cancelling_a_working_task_closes_its_upstream_connection);
            }
            #[test]
            fn forged_tampered_and_expired_task_ids_are_refused() {
                $crate::run($bin, $crate::suite::tasks::forged_tampered_and_expired_task_ids_are_refused);
            }
            #[test]
            fn an_http_client_creates_a_task_leaves_and_fetches_the_result_on_another_connection() {
                $crate::run($bin, $crate::suite::tasks::an_http_client_creates_a_task_leaves_and_fetches_the_result_on_another_connection);
            }
            #[test]
            fn a_modern_client_with_the_extension_polls_its_task_to_the_result() {
                $crate::run($bin, $crate::suite::tasks::a_modern_client_with_the_extension_polls_its_task_to_the_result);
            }
            #[test]
            fn ready_says_whether_a_call_can_work_now() {
                $crate::run($bin, $crate::suite::http::ready_says_whether_a_call_can_work_now);
            }
            #[test]
            fn sdk_clients_without_the_bearer_token_say_that_one_is_required() {
                $crate::run($bin, $crate::suite::sdks::sdk_clients_without_the_bearer_token_say_that_one_is_required);
            }
            #[test]
            fn inspector_cli_lists_and_calls_over_stdio_in_every_era() {
                $crate::run($bin, $crate::suite::clients::inspector_cli_lists_and_calls_over_stdio_in_every_era);
            }
            #[test]
            fn inspector_cli_lists_and_calls_over_http_in_every_era() {
                $crate::run($bin, $crate::suite::clients::inspector_cli_lists_and_calls_over_http_in_every_era);
            }
            #[test]
            fn claude_code_mcp_list_says_when_the_bearer_token_is_missing_or_wrong() {
                $crate::run($bin, $crate::suite::clients::claude_code_mcp_list_says_when_the_bearer_token_is_missing_or_wrong);
            }
            #[test]
            fn a_modern_task_call_answered_within_the_window_gets_its_result_not_a_task() {
                $crate::run($bin, $crate::suite::tasks::a_modern_task_call_answered_within_the_window_gets_its_result_not_a_task);
            }
            #[test]
            fn a_modern_task_call_that_outlives_the_window_becomes_a_task_when_it_ends() {
                $crate::run($bin, $crate::suite::tasks::a_modern_task_call_that_outlives_the_window_becomes_a_task_when_it_ends);
            }
        }
    };
}
