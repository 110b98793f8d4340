// The options of each call, typed from the parameter tables (src/domain/parameters.ts and
// animation.ts). `make client` writes the package's own copy of this module from the same tables
// (infra/client/options.ts), standalone and with each option's description.
import type { SharedParameter, AnimationParameter } from '../domain/animation.ts';
import type { Flat, GivenValues, TakeParameter } from '../domain/parameters.ts';

/** What the client adds itself: never an option. */
type Credentials = 'access_key' | 'signature';

/** Every /api/take parameter, each optional and typed as its row says. */
export type TakeOptions = Flat<Omit<GivenValues<TakeParameter>, Credentials>>;

/** Every /api/animate parameter: the page rows of /api/take and the recording's own. */
export type AnimateOptions = Flat<Omit<GivenValues<SharedParameter | AnimationParameter>, Credentials>>;
