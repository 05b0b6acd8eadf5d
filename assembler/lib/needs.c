// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The answers a plan is built with, asked here of the context and the kernel
 * (plan.c asks nothing), and the entry points that build a context's plan.
 */
#include "context.h"
#include "plan.h"
#include "principal.h"
#include "probe.h"
#include "util.h"

uint64_t ra_plan_have(struct rootasm_ctx *ctx, const struct rootasm_layout *l, const struct ra_grant *g)
{
	uint64_t want = ra_plan_consults(l, g), have = 0;

	for (unsigned int f = 0; f < RA_FEAT_COUNT; f++)
		if ((want & (1ULL << f)) && ra_feature(ctx, f) > 0)
			have |= 1ULL << f;
	return have;
}

unsigned int ra_plan_flags(struct rootasm_ctx *ctx)
{
	return ra_ctx(ctx)->images ? RA_PLAN_CACHE : 0;
}

/*
 * @l's plan for @ctx, as `rootasm check` and rootasm_layout_needs() see it:
 * the tree handed to its principal (in the principal's user namespace, if
 * `check --as` names one). *g is its grant; it must outlive the plan.
 */
static int ctx_plan(struct rootasm_ctx *ctx, const struct rootasm_layout *l, struct ra_grant *g, struct ra_plan **ret,
		    struct rootasm_error *e)
{
	int r = ra_grant(l, NULL, g, e);

	if (r < 0)
		return r;
	return ra_plan_build(l, g, ra_plan_have(ctx, l, g), ra_plan_flags(ctx), ret, e);
}

int rootasm_plan_print(struct rootasm_ctx *ctx, const struct rootasm_layout *l, FILE *out, unsigned int flags)
{
	struct ra_plan *p = NULL;
	struct ra_grant g;
	int r;

	if (flags & ~(ROOTASM_PLAN_JSON | ROOTASM_PLAN_PRETTY))
		return -EINVAL;
	r = ctx_plan(ctx, l, &g, &p, NULL);
	if (r < 0)
		return r;
	r = ra_plan_print(p, out, flags);
	ra_plan_free(p);
	if (r == 0 && ferror(out))
		r = -EIO;
	return r;
}

uint64_t rootasm_layout_needs(struct rootasm_ctx *ctx, const struct rootasm_layout *l)
{
	struct ra_plan *p = NULL;
	struct ra_grant g;
	uint64_t n;

	if (ctx_plan(ctx, l, &g, &p, NULL) < 0)
		return 0;
	n = p->needs;
	ra_plan_free(p);
	return n;
}
