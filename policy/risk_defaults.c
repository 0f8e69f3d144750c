/*
 * risk_defaults.c - the risk rules glassbox ships (docs/gates.md lists
 * them and tests/unit/test_risk.c tests each one). They are data in the
 * same shape as a tenant's "risk" config, parsed by the same parser: a
 * tenant's own rules are checked first, and "defaults": false drops these.
 *
 * What they gate: clicks (and Enter or Space on the focused element) whose
 * target reads like an irreversible or paying action; form submissions to
 * destructive or paying endpoints; "confirm"-like buttons on a destructive
 * form or dialog; accepting a browser dialog that asks about such an
 * action; typing into or choosing in payment fields. browser_evaluate
 * needs approval. Everything else is allowed.
 */
#include "policy/risk-private.h"

/* The words are matched as whole words (risk.h, text_matches). */
#define GB_RISK_DESTRUCTIVE_WORDS                                                                \
	"\"delete\", \"remove\", \"destroy\", \"erase\", \"wipe\", \"purge\", \"terminate\", "   \
	"\"pay\", \"buy\", \"purchase\", \"order\", \"submit payment\", "                        \
	"\"make payment\", \"confirm payment\", \"complete payment\", \"transfer\", \"send\", "  \
	"\"publish\", \"deploy\", \"unsubscribe\", \"close account\", \"cancel subscription\", " \
	"\"cancel order\", \"deactivate\""

#define GB_RISK_CONFIRM_WORDS                                                                   \
	"\"confirm\", \"yes\", \"ok\", \"okay\", \"continue\", \"proceed\", \"i understand\", " \
	"\"agree\", \"accept\", \"submit\", \"do it\""

const char policy_risk_defaults_text[] =
    "{\n"
    "  \"evaluate\": \"approve\",\n"
    "  \"default\": \"allow\",\n"
    "  \"approval_ttl_seconds\": 300,\n"
    "  \"rules\": [\n"
    "    {\"name\": \"destructive-click\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": \"click\",\n"
    "              \"text_matches\": [" GB_RISK_DESTRUCTIVE_WORDS "]}},\n"
    "    {\"name\": \"destructive-key\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": \"press\", \"keys\": [\"Enter\", \"NumpadEnter\", \" \", "
    "\"Space\"],\n"
    "              \"text_matches\": [" GB_RISK_DESTRUCTIVE_WORDS "]}},\n"
    "    {\"name\": \"destructive-form-submit\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": [\"click\", \"press\"], \"submits_form\": true,\n"
    "              \"destructive_form\": true}},\n"
    "    {\"name\": \"destructive-form-action\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": [\"click\", \"press\"], \"submits_form\": true,\n"
    "              \"form_matches\": [" GB_RISK_DESTRUCTIVE_WORDS "]}},\n"
    "    {\"name\": \"confirm-destructive-form\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": \"click\", \"destructive_form\": true,\n"
    "              \"text_matches\": [" GB_RISK_CONFIRM_WORDS "]}},\n"
    "    {\"name\": \"confirm-destructive-dialog\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": \"click\",\n"
    "              \"text_matches\": [" GB_RISK_CONFIRM_WORDS "],\n"
    "              \"form_matches\": [" GB_RISK_DESTRUCTIVE_WORDS "]}},\n"
    "    {\"name\": \"destructive-dialog-accept\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": \"dialog\", \"dialog_accept\": true,\n"
    "              \"text_matches\": [" GB_RISK_DESTRUCTIVE_WORDS "]}},\n"
    "    {\"name\": \"payment-field\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": [\"type\", \"select\"],\n"
    "              \"autocomplete\": [\"cc-*\", \"transaction-amount\", "
    "\"transaction-currency\"]}},\n"
    "    {\"name\": \"payment-field-label\", \"decision\": \"approve\",\n"
    "     \"when\": {\"kind\": [\"type\", \"select\"],\n"
    "              \"text_matches\": [\"card number\", \"credit card\", \"debit card\", \"cvv\",\n"
    "                                \"cvc\", \"cvv2\", \"csc\", \"card security code\",\n"
    "                                \"card verification\", \"iban\", \"cardholder\"]}}\n"
    "  ]\n"
    "}\n";

#undef GB_RISK_DESTRUCTIVE_WORDS
#undef GB_RISK_CONFIRM_WORDS
