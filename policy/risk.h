/*
 * risk.h - risk classification (DESIGN.md, chain step "gate"): before an
 * action runs, the tenant's risk rules decide whether it is allowed, needs
 * a person's approval, or is forbidden. The rules look only at facts the
 * pipeline re-read from the page (struct policy_action_facts), never at
 * the agent's description of the element, so neither the agent's words
 * nor text that a page shows elsewhere can change a decision.
 *
 * Config (the "risk" object of a tenant's JSON config; docs/gates.md):
 *
 *   {
 *     "rules": [
 *       {"name": "send-to-support", "decision": "allow",
 *        "when": {"kind": "click", "page_host": ["support.example.com"],
 *                 "text_matches": ["send"]}}
 *     ],
 *     "evaluate": "approve",          allow | approve | forbid (default approve)
 *     "default": "allow",             when no rule matches (default allow)
 *     "defaults": true,               also apply the shipped rules (default true)
 *     "approval_ttl_seconds": 300     how long an approval stays usable (10..86400)
 *   }
 *
 * Order: "evaluate" decides every browser_evaluate first; then the
 * tenant's rules in order, then (unless "defaults" is false) the shipped
 * rules in order; the first rule whose "when" holds decides; otherwise
 * "default" does. Every key is optional; unknown keys are an error.
 *
 * A rule's "when" holds when every condition in it holds (a list holds
 * when any of its entries does):
 *   kind                 "click" or a list: click type select press hover drag
 *                        navigate evaluate upload dialog other
 *   text_matches         words or phrases found, case-insensitively and as whole
 *                        words, in ANY of the target's visible text, accessible
 *                        name, aria-label or title ("delete" matches "Delete all
 *                        orders", not "undelete"; "delet*" matches a word start)
 *   role, tag            the target's ARIA role / lowercase tag name
 *   input_type           the input's type (password, file, email, ...)
 *   autocomplete         a token of the autocomplete attribute ("cc-*" is a prefix)
 *   form_method          the method of the form the action submits (GET, POST, DELETE)
 *   form_matches         words in the form's action URL path and query, or in its
 *                        label (the form's or enclosing dialog's accessible name)
 *   destructive_form     true: the pipeline flagged the form destructive, or its
 *                        method is DELETE
 *   submits_form         true: the action submits a form (submit click, Enter)
 *   keys                 press only: the key pressed ("Enter", " ", ...)
 *   dialog_accept        dialog only: true when the dialog is accepted
 *   cross_site           true: navigate (or a link click) to another registrable
 *                        domain than the page's (see policy_registrable_domain)
 *   download             true: the target starts a download (<a download>)
 *   page_host            the page's host: "shop.test" or "*.shop.test"
 * A boolean condition set to false requires the fact to be false.
 *
 * Threads: a struct policy_risk is immutable once parsed; every function
 * here may run on any number of threads at once.
 */
#ifndef GB_POLICY_RISK_H
#define GB_POLICY_RISK_H

#include "policy/egress.h" /* the policy module's error codes: POLICY_EINVAL, ... */

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

struct policy_risk;

/* Ceilings on a risk config. */
#define POLICY_RISK_MAX_RULES 256
#define POLICY_RISK_MAX_WORDS 256 /* entries in one list */
#define POLICY_RISK_WORD_MAX 128  /* bytes of one entry */
#define POLICY_RISK_NAME_MAX 64   /* bytes of a rule name */
/* Bytes of one fact string the classifier looks at; the rest is ignored. */
#define POLICY_RISK_FACT_MAX 4096
/* The summary's size: it always fits, long texts are shortened with "...". */
#define POLICY_RISK_SUMMARY_MAX 1024

/* What the action does. */
enum policy_action_kind {
	POLICY_ACT_OTHER = 0,
	POLICY_ACT_CLICK,  /* also double and right clicks */
	POLICY_ACT_TYPE,   /* typing or filling text */
	POLICY_ACT_SELECT, /* choosing options of a <select> */
	POLICY_ACT_PRESS,  /* a key press on the focused element */
	POLICY_ACT_HOVER,
	POLICY_ACT_DRAG,
	POLICY_ACT_NAVIGATE, /* navigate, back, forward, reload */
	POLICY_ACT_EVALUATE, /* arbitrary script: browser_evaluate */
	POLICY_ACT_UPLOAD,   /* setting files on a file input */
	POLICY_ACT_DIALOG,   /* accepting or dismissing alert/confirm/prompt */
	POLICY_ACT_KIND_COUNT
};

/* The decision. */
enum policy_risk_verdict {
	POLICY_RISK_ALLOW = 0,
	POLICY_RISK_APPROVE, /* needs a person's approval */
	POLICY_RISK_FORBID,
};

/*
 * What is really there, as the pipeline re-read it from the page just
 * before the gate (never the agent's words). Every string is borrowed and
 * may be NULL (unknown / not applicable); the classifier looks at the
 * first POLICY_RISK_FACT_MAX bytes of each.
 */
struct policy_action_facts {
	enum policy_action_kind kind;

	/* where */
	const char *session_id; /* glassbox session id (fingerprint) */
	const char *page_url;   /* the top-level page's URL now */
	const char *frame_id;   /* CDP frame id of the target's frame (fingerprint) */
	const char *frame_url;  /* that frame's URL when it is not the main frame */

	/* the target element (click, type, select, press, hover, drag, upload) */
	int64_t backend_node_id;   /* CDP DOM.BackendNodeId, 0 if none */
	const char *node_identity; /* a stable identity the pipeline computes for the node
	                            * (e.g. a hash of frame + backend id + tag + path) */
	const char *role;          /* computed ARIA role: "button", "link", "textbox" */
	const char *name;          /* accessible name */
	const char *text;          /* visible text (innerText; for a dialog: its message;
	                            * for inputs: never the field's current value) */
	const char *aria_label;    /* the aria-label attribute as written */
	const char *title;         /* the title attribute */
	const char *tag;           /* lowercase tag name: "button", "a", "input" */
	const char *input_type;    /* for <input>: its type, lowercase */
	const char *autocomplete;  /* the autocomplete attribute as written */

	/* the form the action submits, if any */
	int submits_form;        /* 1: a submit button click or Enter in a form field */
	const char *form_method; /* "GET", "POST", "DELETE" ... (formmethod wins) */
	const char *form_action; /* absolute URL (formaction wins) */
	const char *form_label;  /* the form's accessible name, or the heading of the
	                            * dialog it is in ("Delete your account?") */
	int is_destructive_form; /* the pipeline's hint: the form is destructive */

	/* what the action carries */
	const char *key;      /* press: the key ("Enter", "a", "Control+A") */
	int dialog_accept;    /* dialog: 1 accept, 0 dismiss */
	const char *dest_url; /* navigate: the destination; click: a link's href */
	int starts_download;  /* the target is a link with a download attribute */
	size_t file_count;    /* upload: number of files */
	/* The bytes that decide what the action does beyond its target: typed
	 * text, selected values joined by '\n', the key, the destination URL,
	 * the script, the uploaded files' names and hashes. Only hashed (into
	 * the fingerprint) and counted (value_len, for the summary); never
	 * stored, logged or shown. */
	const unsigned char *value;
	size_t value_len;
};

/* What policy_risk_classify decided. */
struct policy_risk_decision {
	enum policy_risk_verdict verdict;
	char rule[POLICY_RISK_NAME_MAX + 1];         /* the deciding rule's name; "evaluate" for the
	                                      * "evaluate" setting, "default" when none matched */
	char summary[POLICY_RISK_SUMMARY_MAX];       /* exactly what would happen, for a person:
	                                        * 'click button "Delete all orders" on
	                                        * http://shop.test/orders, submits POST
	                                        * /orders/delete' */
	char message[POLICY_RISK_SUMMARY_MAX + 256]; /* for the agent, when not allowed:
	                                              * what, and what to do */
};

/*
 * Parses a risk config object (shape above). json borrowed; NULL means the
 * shipped defaults alone. On success *out is a new rule set
 * (policy_risk_free). On error returns -POLICY_EINVAL with what is wrong
 * and where in err ("risk.rules[2].when.kind: \"clik\" is not an action
 * kind: use one of click, type, ..."), or -POLICY_ENOMEM.
 */
int policy_risk_parse(const json_t *json, struct policy_risk **out, char *err, size_t errlen);

/* Frees r. NULL is a no-op. */
void policy_risk_free(struct policy_risk *r);

/* The shipped default rules, as the JSON text compiled in (a config
 * object of the shape above). Static; never NULL. */
const char *policy_risk_defaults_json(void);

/* How long an approval granted under r stays usable, in milliseconds. */
int64_t policy_risk_approval_ttl_ms(const struct policy_risk *r);

/*
 * Classifies one action. r and facts borrowed. Fills in d (verdict, rule,
 * summary, and a message for the agent when the verdict is not
 * POLICY_RISK_ALLOW). Returns 0, or -POLICY_EINVAL when r or facts is
 * NULL (d is then a forbid with rule "invalid").
 */
int policy_risk_classify(const struct policy_risk *r, const struct policy_action_facts *facts,
                         struct policy_risk_decision *d);

/*
 * Writes the plain-language summary of what the action would do into buf
 * (always NUL-terminated; long page texts shortened with "..."), e.g.
 *   click button "Delete all orders" on http://shop.test/orders, submits POST /orders/delete
 *   type 16 characters into textbox "Card number" (autocomplete cc-number) on https://...
 *   navigate from https://shop.test/ to https://pay.example/ (another site: pay.example)
 *   run a script (42 characters) on https://shop.test/
 * When the accessible name or aria-label says something else than the
 * visible text, both are shown: button "Delete account" (accessible name
 * "Cancel"). Typed values are never shown, only their length.
 */
void policy_risk_summary(const struct policy_action_facts *facts, char *buf, size_t buflen);

/* "click", "type", ...: the kind's name in configs and fingerprints. */
const char *policy_action_kind_name(enum policy_action_kind kind);

/* The kind named name, or -1 when none is. */
int policy_action_kind_from_name(const char *name);

/* "allow", "approve", "forbid". */
const char *policy_risk_verdict_name(enum policy_risk_verdict v);

/*
 * The registrable domain ("site") of a host, approximated without the
 * Public Suffix List: the last two labels, or the last three when the
 * last two are a common two-level public suffix (co.uk, com.au, co.jp,
 * github.io, ... a compiled-in list of about 80). Suffixes not on that
 * list (e.g. city.kawasaki.jp, or a private suffix we do not know) make
 * two different owners look like one site. An address literal or a
 * single-label name is its own site. host is a name as in a URL
 * (case and a trailing dot ignored). Writes "" when host is empty.
 */
void policy_registrable_domain(const char *host, char *out, size_t outlen);

/*
 * 1 when both URLs have a host and their registrable domains differ, 0
 * otherwise (a URL without a host, such as about:blank, is nobody's site).
 */
int policy_is_cross_site(const char *from_url, const char *to_url);

#endif
