/*
 * Egress drills with the tool layer alone (Fetch and proxy off): the URLs
 * browser_navigate is given are judged before the browser acts. The drills
 * are in egress-drills.mjs.
 */
import { defineToolDrills, useDrill, LAYER_SETS } from './egress-drills.mjs';

defineToolDrills(useDrill({ layers: LAYER_SETS.tool }));
