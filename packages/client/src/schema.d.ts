/**
 * Generated from openapi.json by openapi-typescript (`npm run openapi:types`): do not edit.
 * `npm run typecheck` fails when this file and openapi.json disagree.
 */

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Liveness: 200 while the process runs */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {string} */
                            status: "ok" | "unavailable";
                            checks?: {
                                [key: string]: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/readyz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Readiness: 200 only when every dependency is usable */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {string} */
                            status: "ok" | "unavailable";
                            checks?: {
                                [key: string]: string;
                            };
                        };
                    };
                };
                /** @description Default Response */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {string} */
                            status: "ok" | "unavailable";
                            checks?: {
                                [key: string]: string;
                            };
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/plans": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The plans and their limits (public) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                name: string;
                                price_cents: number;
                                monthly_quota: number | null;
                                daily_quota: number | null;
                                rate_per_minute: number | null;
                                /** @description Signed render link requests per minute per API key, a window apart from rate_per_minute. */
                                link_requests_per_minute: number | null;
                                concurrent_renders: number;
                                max_width: number;
                                max_height: number;
                                formats: string[];
                                max_device_scale_factor: number;
                                full_page: boolean;
                                fresh: boolean;
                                retention_hours: number;
                                listable: boolean;
                                /** @description Async captures queued or rendering at once; 0: no async captures. */
                                max_queued_jobs: number;
                                /** @description Monitors one account may have; 0: no monitors. */
                                max_monitors: number;
                                /** @description The shortest `every` a monitor may have, in minutes. */
                                min_monitor_interval: number;
                                /** @description Storage destinations (your own buckets) one account may have; 0: none. */
                                storage_destinations: number;
                                /** @description Captures through a proxy (`proxy`, `proxy_country`; GET /v1/proxies). */
                                proxies: boolean;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/devices": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The device presets of the capture option `device` (public) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** @description The value of `device`. */
                                name: string;
                                label: string;
                                /** @description Viewport width, CSS px. */
                                width: number;
                                /** @description Viewport height, CSS px. */
                                height: number;
                                device_scale_factor: number;
                                mobile: boolean;
                                has_touch: boolean;
                                /** @description null: the capture's default user agent (Chrome with the engine's version). */
                                user_agent: string | null;
                            }[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/proxies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * The operator's proxies of the capture options `proxy` and `proxy_country`
         * @description Ids and countries only. Whether the account may use them is its plan's `proxies` field (GET /v1/plans).
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** @description The value of `proxy`. */
                                id: string;
                                /** @description ISO 3166-1 alpha-2 codes this proxy serves (`proxy_country`); may be empty. */
                                countries: string[];
                            }[];
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/signup": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Create an account and start a session */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** Format: email */
                        email: string;
                        password: string;
                    };
                };
            };
            responses: {
                /** @description The signed-in account. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            user: {
                                id: number;
                                email: string;
                                /** @enum {string} */
                                plan: "free" | "pro";
                                /** Format: date-time */
                                created_at: string;
                            };
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Conflict. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 64 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/login": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Sign in; a new session id is issued every time */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        email: string;
                        password: string;
                    };
                };
            };
            responses: {
                /** @description The signed-in account. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            user: {
                                id: number;
                                email: string;
                                /** @enum {string} */
                                plan: "free" | "pro";
                                /** Format: date-time */
                                created_at: string;
                            };
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 64 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/logout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** End the session (server-side) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/me": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The signed-in account */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The signed-in account. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            user: {
                                id: number;
                                email: string;
                                /** @enum {string} */
                                plan: "free" | "pro";
                                /** Format: date-time */
                                created_at: string;
                            };
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List active API keys, newest first (prefix and metadata only) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                id: number;
                                name: string;
                                /** @description The first 12 characters of the key, e.g. `sk_live_Ab3x`. */
                                prefix: string;
                                /** Format: date-time */
                                created_at: string;
                                last_used_at: string | null;
                            }[];
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /** Create an API key (the plaintext is shown once) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string;
                    };
                };
            };
            responses: {
                /** @description The new key. `key` is the plaintext and `signing_secret` signs render links (`sig_live_...`): store both now, neither is shown again. */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: number;
                            name: string;
                            /** @description The first 12 characters of the key, e.g. `sk_live_Ab3x`. */
                            prefix: string;
                            /** Format: date-time */
                            created_at: string;
                            last_used_at: string | null;
                        } & {
                            key: string;
                            signing_secret: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 64 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Revoke an API key; it is refused at once, in-flight captures included */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The key id (positive integer). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys/{id}/signing-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace a key's signing secret (shown once); links signed with the old fail */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The key id (positive integer). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The new signing secret. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: number;
                            /** @description The new secret: store it now, it is never shown again. */
                            signing_secret: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/billing/subscription": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The plan, subscription status and renewal date */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The plan in force (free or pro). */
                            plan: string;
                            /**
                             * @description The subscription as the payment provider last reported it; none without one.
                             * @enum {string}
                             */
                            status: "none" | "active" | "past_due" | "canceled" | "incomplete" | "unpaid";
                            /** @description End of the paid period: the renewal date, or the last day of Pro when cancelling at period end. Null without a live subscription. */
                            renews_at: string | null;
                            cancel_at_period_end: boolean;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/billing/checkout": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Start the Pro checkout with the payment provider
         * @description Returns the payment page to send the browser to. The plan changes when the provider's webhook reports the payment, never on the way back to the dashboard.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": Record<string, never>;
                };
            };
            responses: {
                /** @description The checkout page. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: uri */
                            url: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Conflict. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 64 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Temporarily unavailable; retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/billing/portal": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Open the payment provider's page to manage or cancel the subscription */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": Record<string, never>;
                };
            };
            responses: {
                /** @description The billing portal page. */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** Format: uri */
                            url: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Conflict. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 64 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Temporarily unavailable; retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/screenshots": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's screenshots, most recent first (Pro; Free accounts get an empty list) */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                id: number;
                                url: string;
                                format: string;
                                width: number;
                                height: number;
                                full_page: boolean;
                                quality: number;
                                device_scale_factor: number;
                                image_url: string;
                                /** Format: date-time */
                                created_at: string;
                                /** Format: date-time */
                                expires_at: string;
                            }[];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Capture a page and get a hosted image URL
         * @description Answers 201 with the JSON below; with `response_type: "image"` the 201 body is the image bytes instead (Content-Type of the format) and the facts are headers: X-Image-Url, X-Expires-At, X-Cached, X-Quota-Used, X-Quota-Limit, X-Screenshot-Id; X-Capture-Warnings names the warnings' codes on either.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Absolute http(s) URL of the page, at most 2,048 characters. Exactly one of url, html or markdown. */
                        url?: string;
                        /**
                         * @description Default png; webp and pdf are Pro-only (plan data). pdf: a PDF of the page, with the pdf_* options.
                         * @enum {string}
                         */
                        format?: "png" | "jpeg" | "webp" | "pdf";
                        /** @description Viewport width in CSS pixels (default 1920), capped at the plan maximum. */
                        width?: number;
                        /** @description Viewport height in CSS pixels (default 1080), capped at the plan maximum. */
                        height?: number;
                        /** @description Capture the full scrollable page (cut at MAX_PAGE_HEIGHT, by default 65,535 device pixels; webp at 16,383, jpeg at 65,500). */
                        full_page?: boolean;
                        /** @description JPEG/WebP quality (default 80). */
                        quality?: number;
                        /** @description Bypass the cache and render anew (Pro). */
                        fresh?: boolean;
                        /** @description Device pixel ratio, 1 to 3 (Pro above 1). */
                        device_scale_factor?: number;
                        /** @enum {string} */
                        wait_until?: "load" | "domcontentloaded" | "networkidle0" | "networkidle2";
                        /** @description Extra wait before capture, ms. */
                        delay?: number;
                        wait_for_selector?: string;
                        /** @description Capture only this element. */
                        selector?: string;
                        dark_mode?: boolean;
                        reduced_motion?: boolean;
                        hide_selectors?: string[];
                        /** @description Transparent background (png/webp). */
                        omit_background?: boolean;
                        /** @description The User-Agent the page's requests send and navigator.userAgent reports; the Sec-CH-UA client hints and navigator.userAgentData follow it. Default: Chrome with the version of the service's Chromium (never HeadlessChrome). */
                        user_agent?: string;
                        /** @description A BCP 47 language tag: the Accept-Language header, navigator.language and the page's Intl formats. Default: US English (Accept-Language en-US,en;q=0.9). */
                        locale?: string;
                        /** @description An IANA time zone name for the page's clock. Default UTC, whatever the server's. */
                        timezone?: string;
                        /**
                         * @description The CSS media type the page is rendered for. Default screen.
                         * @enum {string}
                         */
                        media_type?: "screen" | "print";
                        /** @description CSS added to the page once it has loaded, before the capture (the page's own Content-Security-Policy does not block it). */
                        styles?: string;
                        /** @description JavaScript run in the page once it has loaded (after `styles`), before the capture; a promise it ends with is awaited within the render deadline. An error it throws is 400. */
                        scripts?: string;
                        /** @description An element clicked once the page has loaded (after `scripts`). */
                        click?: string;
                        /** @description An element scrolled to the top of the viewport before a viewport capture. */
                        scroll_into_view?: string;
                        /** @description A target that answers 4xx or 5xx ends in 502 target_error (no quota spent) instead of being captured. */
                        fail_on_http_error?: boolean;
                        /** @description Warnings that reject the capture (422 capture_rejected, no quota spent) instead of answering 201 with them: any of blank_image, not_at_rest, requests_pending, fonts_not_loaded, truncated, banner_remaining. Default none. */
                        fail_on?: ("blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining")[];
                        /** @description Seconds a result may be served from the cache: 0 (never) to 86400; default 900. `fresh` still forces a render. */
                        cache_ttl?: number;
                        /** @description A region of the page, in CSS px of the page (not of the viewport), captured alone. Not with full_page or selector. Cut to the image bounds (truncated) when larger. */
                        clip?: {
                            /** @description CSS px from the left of the page. */
                            x: number;
                            /** @description CSS px from the top of the page. */
                            y: number;
                            /** @description CSS px. */
                            width: number;
                            /** @description CSS px. */
                            height: number;
                        };
                        /** @description URL patterns whose requests the page does not make. `*` stands for any characters; a pattern matches the whole URL, query included: `*.png*`, `*://ads.example.com/*`, `*\/analytics.js*`. The page itself (the `url`) is always loaded. */
                        block_requests?: string[];
                        /** @description Kinds of request the page does not make. `other` is every kind not named here (beacons, manifests, prefetches, event streams, text tracks), never the page itself. */
                        block_resources?: ("image" | "media" | "font" | "stylesheet" | "script" | "xhr" | "fetch" | "websocket" | "other")[];
                        /** @description Extra request headers, `{"Name": "value"}`, sent with the requests to the target's own origin only (the page itself and its same-origin resources; never to other origins). Host, Cookie, Content-Length, Proxy-* and hop-by-hop headers are refused. */
                        headers?: {
                            [key: string]: string;
                        };
                        /** @description Cookies the browser holds for the target before it loads, scoped to the target's host (or to `domain`, a parent of it). `same_site: "None"` needs `secure: true`, and `secure` an https target. */
                        cookies?: {
                            name: string;
                            value: string;
                            /** @description A parent domain of the target's host (the cookie then reaches its subdomains too). Default: the target's host only. */
                            domain?: string;
                            path?: string;
                            secure?: boolean;
                            http_only?: boolean;
                            /** @enum {string} */
                            same_site?: "Strict" | "Lax" | "None" | "strict" | "lax" | "none";
                        }[];
                        /** @description HTTP Basic credentials, sent with the requests to the target's own origin only (never to other origins, nor after a redirect to one). Not with an Authorization header in `headers`. */
                        http_auth?: {
                            username: string;
                            password: string;
                        };
                        /** @description Ads blocked: requests matched by EasyList (shipped with the service; nothing is downloaded) are not made, and the ad boxes its element rules name are hidden. */
                        block_ads?: boolean;
                        /** @description Trackers blocked: requests matched by EasyPrivacy (shipped with the service; nothing is downloaded) are not made. */
                        block_trackers?: boolean;
                        /** @description Cookie consent banners dismissed before the capture, consent refused where the banner offers a choice (DuckDuckGo's autoconsent rules, shipped with the service), else hidden. */
                        block_cookie_banners?: boolean;
                        /** @description A device preset (GET /v1/devices lists them): its viewport, scale, mobile and touch emulation and user agent. Fields given explicitly win. */
                        device?: string;
                        /** @description Mobile emulation: the page's meta viewport applies, scrollbars overlay the page. Default: the device preset's, else false. */
                        mobile?: boolean;
                        /** @description Touch support: touch events, navigator.maxTouchPoints 5, (pointer: coarse). Default: the device preset's, else false. */
                        has_touch?: boolean;
                        /** @description Width and height swapped (the device preset's, or the request's), then capped at the plan's maximum like width and height. */
                        landscape?: boolean;
                        /** @description The 201 also carries `metadata`: the page title, description, final URL, HTTP status, Open Graph title, description and image, and icon URL (absent values are null). */
                        metadata?: boolean;
                        /**
                         * @description format pdf: the paper size. Default a4.
                         * @enum {string}
                         */
                        pdf_paper?: "a4" | "letter" | "legal" | "a3" | "tabloid";
                        /** @description format pdf: the paper turned on its side. Default false. */
                        pdf_landscape?: boolean;
                        /** @description format pdf: background colours and images printed. Default true. */
                        pdf_print_background?: boolean;
                        /** @description format pdf: one page as tall as the content (the paper's width), cut at the height bound. Default false. */
                        pdf_single_page?: boolean;
                        /**
                         * @description json (default): the JSON body. image: the image bytes as the 201 body, with Content-Type of the format and X-Image-Url, X-Expires-At, X-Cached, X-Quota-Used, X-Quota-Limit and (listable records) X-Screenshot-Id headers.
                         * @enum {string}
                         */
                        response_type?: "json" | "image";
                        /** @description Queue the capture and answer 202 `{id, status: "queued", status_url}` at once; the result is at GET /v1/screenshots/{id} and, with webhook_url, delivered there (Pro). */
                        async?: boolean;
                        /** @description With async: an http(s) URL the result is POSTed to (Standard Webhooks signature), under the same address rules as `url`. */
                        webhook_url?: string;
                        /** @description The delivered image's width in px (16 to the plan's max_width). The page still renders at width x height (or full page); the image is scaled to this. With only image_width, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                        image_width?: number;
                        /** @description The delivered image's height in px (16 to the plan's max_height). The page still renders at width x height (or full page); the image is scaled to this. With only image_height, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                        image_height?: number;
                        /**
                         * @description With both image_width and image_height: cover (default) scales the image to cover both and crops it from the top centre; contain scales it to fit inside both (no padding: one side may come out smaller); fill stretches it to both.
                         * @enum {string}
                         */
                        image_fit?: "cover" | "contain" | "fill";
                        /** @description An HTML document to capture instead of a url (at most 1 MiB). Exactly one of url, html or markdown. Everything it loads goes through the same address rules as a url capture; its relative links resolve against base_url (without it they load nothing). Request bodies with html or markdown may be up to 1.5 MiB. */
                        html?: string;
                        /** @description GitHub-flavoured Markdown to capture instead of a url (at most 256 KiB), rendered as a readable page in the service's stylesheet: light, or dark with dark_mode. Exactly one of url, html or markdown; base_url as for html. */
                        markdown?: string;
                        /** @description With html or markdown: the absolute http(s) URL the document is shown at, which its relative links resolve against. Checked like url; nothing is fetched from it for the document itself. */
                        base_url?: string;
                        /** @description Keep the rendered page's content beside the image: "html" (its DOM as HTML), "text" (its visible text), "markdown" (its DOM as Markdown); any of them. Each is hosted with the image's retention, at most 5 MiB (cut there, content_truncated). The answer adds content: {html?, text?, markdown?} URLs. */
                        content?: ("html" | "text" | "markdown")[];
                        /** @description Where the page's traffic goes out: an operator proxy's id (GET /v1/proxies), or your own proxy as `http://`, `https://`, `socks5://` or `socks5h://` URL, credentials allowed (`socks5://user:pass@host:1080`). Your own proxy must be on a public address. Its credentials are never logged nor answered. Not with `proxy_country`. */
                        proxy?: string;
                        /** @description Go out through an operator proxy serving this country (ISO 3166-1 alpha-2, `de`), one in turn when several do. Not with `proxy`. */
                        proxy_country?: string;
                        /** @description The position the page's Geolocation API reports, permission granted (without it the page is denied). Goes well with `timezone`, `locale` and `proxy_country`. */
                        geolocation?: {
                            latitude: number;
                            longitude: number;
                            /** @description Metres; default 100. */
                            accuracy?: number;
                        };
                        /** @description Write the capture into your own S3-compatible bucket too (docs/destinations.md). An upload that fails is a 502 storage_destination_error, with no unit spent. */
                        storage?: {
                            /** @description One of your storage destinations (POST /v1/storage-destinations). */
                            destination: string;
                            /** @description The key under the destination's prefix; fields {id} {hash} {ext} {year} {month} {day} {host}. Default "{id}.{ext}". */
                            path?: string;
                            /** @description false: no copy is kept here (no image_url); always rendered anew. */
                            hosted?: boolean;
                        };
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Present only for listable (Pro) records. */
                            id?: number;
                            /**
                             * Format: uri
                             * @description Absent only with `storage.hosted: false` (no copy kept here).
                             */
                            image_url?: string;
                            cached: boolean;
                            /** Format: date-time */
                            expires_at: string;
                            quota: {
                                used: number;
                                limit: number;
                            };
                            format: string;
                            /** @description Pixel width of the image; for a PDF, its first page in points (1/72 in). */
                            width: number;
                            /** @description Pixel height of the image; for a PDF, its first page in points (1/72 in). */
                            height: number;
                            /** @description Full-page image cut at the height limit. */
                            truncated?: boolean;
                            /** @description What may be wrong with the image, empty when nothing is suspect (docs/api.md, "Warnings"); `fail_on` turns chosen codes into a 422 instead. */
                            warnings: {
                                /**
                                 * @description blank_image: one colour, or nearly. not_at_rest: the page was still changing when the settle wait ended. requests_pending: requests still loading at capture. fonts_not_loaded: web fonts still loading or failed. truncated: the image was cut at the size limit. banner_remaining: with block_cookie_banners, a consent layer still covers part of the page.
                                 * @enum {string}
                                 */
                                code: "blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining";
                                /** @description What was seen, for a human. */
                                message: string;
                            }[];
                            /** @description Only with `metadata: true`; absent values are null. */
                            metadata?: {
                                title: string | null;
                                description: string | null;
                                /** @description The page URL when captured, after redirects. */
                                final_url: string;
                                http_status: number | null;
                                og: {
                                    title: string | null;
                                    description: string | null;
                                    image: string | null;
                                };
                                icon_url: string | null;
                            };
                            /** @description Only with `content`: where each kind asked for is hosted, with the image's retention. */
                            content?: {
                                /**
                                 * Format: uri
                                 * @description The DOM as HTML.
                                 */
                                html?: string;
                                /**
                                 * Format: uri
                                 * @description The visible text.
                                 */
                                text?: string;
                                /**
                                 * Format: uri
                                 * @description The DOM as Markdown.
                                 */
                                markdown?: string;
                            };
                            /** @description Only with `storage`: where the copy was written (docs/destinations.md). */
                            storage?: {
                                destination: string;
                                bucket: string;
                                /** @description The image's key in the bucket, prefix included. */
                                key: string;
                                /** @description Its URL (public only with acl public-read). */
                                location: string;
                                etag: string | null;
                            };
                            /** @description Only with `content`: a file was cut at 5 MiB. */
                            content_truncated?: boolean;
                        };
                    };
                };
                /** @description With `async: true`: queued; the result is at `status_url`. */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The job id (`job_...`). */
                            id: string;
                            /** @enum {string} */
                            status: "queued";
                            /** Format: uri */
                            status_url: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Monthly quota exhausted. */
                402: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            plan: string;
                            used: number;
                            limit: number;
                            /** Format: date-time */
                            resets_at: string;
                        };
                    };
                };
                /** @description Body larger than 64 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description A warning named in fail_on was found; nothing stored, no quota spent. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description A message naming the warnings. */
                            error: string;
                            /** @enum {string} */
                            code: "capture_rejected";
                            /** @description The warnings `fail_on` named. */
                            warnings: {
                                /**
                                 * @description blank_image: one colour, or nearly. not_at_rest: the page was still changing when the settle wait ended. requests_pending: requests still loading at capture. fonts_not_loaded: web fonts still loading or failed. truncated: the image was cut at the size limit. banner_remaining: with block_cookie_banners, a consent layer still covers part of the page.
                                 * @enum {string}
                                 */
                                code: "blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining";
                                /** @description What was seen, for a human. */
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The target could not be reached. */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Temporarily unavailable; retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Render deadline passed. */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description A message naming the phase and the pending requests. */
                            error: string;
                            /** @enum {string} */
                            code: "render_timeout";
                            /**
                             * @description Where the capture was when its deadline passed: queue (a render slot), browser, navigation (the target's main document had not answered), load (the wait_until event), network (the network going quiet), selector (wait_for_selector), delay, actions (styles, scripts, click, banners), settle, capture (the image itself). Absent when the capture waited for the same render on another node.
                             * @enum {string}
                             */
                            phase?: "queue" | "browser" | "navigation" | "load" | "network" | "selector" | "delay" | "actions" | "settle" | "capture";
                            /** @description Up to 10 requests still loading, as origin and path (never the query). */
                            pending_requests?: string[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/screenshots/batch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Queue a batch of async captures (Pro)
         * @description 1 to 50 capture bodies, each an async capture: each holds a quota unit, gets its own job and, with the batch's `webhook_url`, its own `screenshot.succeeded` or `screenshot.failed` event; `batch.completed` `{batch_id, succeeded, failed}` follows the last one. A request that fails validation refuses the whole batch (400 naming `requests[i]`); a month that cannot cover every request refuses it with 402; nothing is queued or held then. Counts as one request in the per-minute capture rate.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Capture bodies, as POST /v1/screenshots takes them; each is async (leave `async` out; `async: false`, a `webhook_url` of its own and `response_type: "image"` are refused, naming the request). */
                        requests: {
                            /** @description Absolute http(s) URL of the page, at most 2,048 characters. Exactly one of url, html or markdown. */
                            url?: string;
                            /**
                             * @description Default png; webp and pdf are Pro-only (plan data). pdf: a PDF of the page, with the pdf_* options.
                             * @enum {string}
                             */
                            format?: "png" | "jpeg" | "webp" | "pdf";
                            /** @description Viewport width in CSS pixels (default 1920), capped at the plan maximum. */
                            width?: number;
                            /** @description Viewport height in CSS pixels (default 1080), capped at the plan maximum. */
                            height?: number;
                            /** @description Capture the full scrollable page (cut at MAX_PAGE_HEIGHT, by default 65,535 device pixels; webp at 16,383, jpeg at 65,500). */
                            full_page?: boolean;
                            /** @description JPEG/WebP quality (default 80). */
                            quality?: number;
                            /** @description Bypass the cache and render anew (Pro). */
                            fresh?: boolean;
                            /** @description Device pixel ratio, 1 to 3 (Pro above 1). */
                            device_scale_factor?: number;
                            /** @enum {string} */
                            wait_until?: "load" | "domcontentloaded" | "networkidle0" | "networkidle2";
                            /** @description Extra wait before capture, ms. */
                            delay?: number;
                            wait_for_selector?: string;
                            /** @description Capture only this element. */
                            selector?: string;
                            dark_mode?: boolean;
                            reduced_motion?: boolean;
                            hide_selectors?: string[];
                            /** @description Transparent background (png/webp). */
                            omit_background?: boolean;
                            /** @description The User-Agent the page's requests send and navigator.userAgent reports; the Sec-CH-UA client hints and navigator.userAgentData follow it. Default: Chrome with the version of the service's Chromium (never HeadlessChrome). */
                            user_agent?: string;
                            /** @description A BCP 47 language tag: the Accept-Language header, navigator.language and the page's Intl formats. Default: US English (Accept-Language en-US,en;q=0.9). */
                            locale?: string;
                            /** @description An IANA time zone name for the page's clock. Default UTC, whatever the server's. */
                            timezone?: string;
                            /**
                             * @description The CSS media type the page is rendered for. Default screen.
                             * @enum {string}
                             */
                            media_type?: "screen" | "print";
                            /** @description CSS added to the page once it has loaded, before the capture (the page's own Content-Security-Policy does not block it). */
                            styles?: string;
                            /** @description JavaScript run in the page once it has loaded (after `styles`), before the capture; a promise it ends with is awaited within the render deadline. An error it throws is 400. */
                            scripts?: string;
                            /** @description An element clicked once the page has loaded (after `scripts`). */
                            click?: string;
                            /** @description An element scrolled to the top of the viewport before a viewport capture. */
                            scroll_into_view?: string;
                            /** @description A target that answers 4xx or 5xx ends in 502 target_error (no quota spent) instead of being captured. */
                            fail_on_http_error?: boolean;
                            /** @description Warnings that reject the capture (422 capture_rejected, no quota spent) instead of answering 201 with them: any of blank_image, not_at_rest, requests_pending, fonts_not_loaded, truncated, banner_remaining. Default none. */
                            fail_on?: ("blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining")[];
                            /** @description Seconds a result may be served from the cache: 0 (never) to 86400; default 900. `fresh` still forces a render. */
                            cache_ttl?: number;
                            /** @description A region of the page, in CSS px of the page (not of the viewport), captured alone. Not with full_page or selector. Cut to the image bounds (truncated) when larger. */
                            clip?: {
                                /** @description CSS px from the left of the page. */
                                x: number;
                                /** @description CSS px from the top of the page. */
                                y: number;
                                /** @description CSS px. */
                                width: number;
                                /** @description CSS px. */
                                height: number;
                            };
                            /** @description URL patterns whose requests the page does not make. `*` stands for any characters; a pattern matches the whole URL, query included: `*.png*`, `*://ads.example.com/*`, `*\/analytics.js*`. The page itself (the `url`) is always loaded. */
                            block_requests?: string[];
                            /** @description Kinds of request the page does not make. `other` is every kind not named here (beacons, manifests, prefetches, event streams, text tracks), never the page itself. */
                            block_resources?: ("image" | "media" | "font" | "stylesheet" | "script" | "xhr" | "fetch" | "websocket" | "other")[];
                            /** @description Extra request headers, `{"Name": "value"}`, sent with the requests to the target's own origin only (the page itself and its same-origin resources; never to other origins). Host, Cookie, Content-Length, Proxy-* and hop-by-hop headers are refused. */
                            headers?: {
                                [key: string]: string;
                            };
                            /** @description Cookies the browser holds for the target before it loads, scoped to the target's host (or to `domain`, a parent of it). `same_site: "None"` needs `secure: true`, and `secure` an https target. */
                            cookies?: {
                                name: string;
                                value: string;
                                /** @description A parent domain of the target's host (the cookie then reaches its subdomains too). Default: the target's host only. */
                                domain?: string;
                                path?: string;
                                secure?: boolean;
                                http_only?: boolean;
                                /** @enum {string} */
                                same_site?: "Strict" | "Lax" | "None" | "strict" | "lax" | "none";
                            }[];
                            /** @description HTTP Basic credentials, sent with the requests to the target's own origin only (never to other origins, nor after a redirect to one). Not with an Authorization header in `headers`. */
                            http_auth?: {
                                username: string;
                                password: string;
                            };
                            /** @description Ads blocked: requests matched by EasyList (shipped with the service; nothing is downloaded) are not made, and the ad boxes its element rules name are hidden. */
                            block_ads?: boolean;
                            /** @description Trackers blocked: requests matched by EasyPrivacy (shipped with the service; nothing is downloaded) are not made. */
                            block_trackers?: boolean;
                            /** @description Cookie consent banners dismissed before the capture, consent refused where the banner offers a choice (DuckDuckGo's autoconsent rules, shipped with the service), else hidden. */
                            block_cookie_banners?: boolean;
                            /** @description A device preset (GET /v1/devices lists them): its viewport, scale, mobile and touch emulation and user agent. Fields given explicitly win. */
                            device?: string;
                            /** @description Mobile emulation: the page's meta viewport applies, scrollbars overlay the page. Default: the device preset's, else false. */
                            mobile?: boolean;
                            /** @description Touch support: touch events, navigator.maxTouchPoints 5, (pointer: coarse). Default: the device preset's, else false. */
                            has_touch?: boolean;
                            /** @description Width and height swapped (the device preset's, or the request's), then capped at the plan's maximum like width and height. */
                            landscape?: boolean;
                            /** @description The 201 also carries `metadata`: the page title, description, final URL, HTTP status, Open Graph title, description and image, and icon URL (absent values are null). */
                            metadata?: boolean;
                            /**
                             * @description format pdf: the paper size. Default a4.
                             * @enum {string}
                             */
                            pdf_paper?: "a4" | "letter" | "legal" | "a3" | "tabloid";
                            /** @description format pdf: the paper turned on its side. Default false. */
                            pdf_landscape?: boolean;
                            /** @description format pdf: background colours and images printed. Default true. */
                            pdf_print_background?: boolean;
                            /** @description format pdf: one page as tall as the content (the paper's width), cut at the height bound. Default false. */
                            pdf_single_page?: boolean;
                            /**
                             * @description json (default): the JSON body. image: the image bytes as the 201 body, with Content-Type of the format and X-Image-Url, X-Expires-At, X-Cached, X-Quota-Used, X-Quota-Limit and (listable records) X-Screenshot-Id headers.
                             * @enum {string}
                             */
                            response_type?: "json" | "image";
                            /** @description Queue the capture and answer 202 `{id, status: "queued", status_url}` at once; the result is at GET /v1/screenshots/{id} and, with webhook_url, delivered there (Pro). */
                            async?: boolean;
                            /** @description With async: an http(s) URL the result is POSTed to (Standard Webhooks signature), under the same address rules as `url`. */
                            webhook_url?: string;
                            /** @description The delivered image's width in px (16 to the plan's max_width). The page still renders at width x height (or full page); the image is scaled to this. With only image_width, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                            image_width?: number;
                            /** @description The delivered image's height in px (16 to the plan's max_height). The page still renders at width x height (or full page); the image is scaled to this. With only image_height, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                            image_height?: number;
                            /**
                             * @description With both image_width and image_height: cover (default) scales the image to cover both and crops it from the top centre; contain scales it to fit inside both (no padding: one side may come out smaller); fill stretches it to both.
                             * @enum {string}
                             */
                            image_fit?: "cover" | "contain" | "fill";
                            /** @description An HTML document to capture instead of a url (at most 1 MiB). Exactly one of url, html or markdown. Everything it loads goes through the same address rules as a url capture; its relative links resolve against base_url (without it they load nothing). Request bodies with html or markdown may be up to 1.5 MiB. */
                            html?: string;
                            /** @description GitHub-flavoured Markdown to capture instead of a url (at most 256 KiB), rendered as a readable page in the service's stylesheet: light, or dark with dark_mode. Exactly one of url, html or markdown; base_url as for html. */
                            markdown?: string;
                            /** @description With html or markdown: the absolute http(s) URL the document is shown at, which its relative links resolve against. Checked like url; nothing is fetched from it for the document itself. */
                            base_url?: string;
                            /** @description Keep the rendered page's content beside the image: "html" (its DOM as HTML), "text" (its visible text), "markdown" (its DOM as Markdown); any of them. Each is hosted with the image's retention, at most 5 MiB (cut there, content_truncated). The answer adds content: {html?, text?, markdown?} URLs. */
                            content?: ("html" | "text" | "markdown")[];
                            /** @description Where the page's traffic goes out: an operator proxy's id (GET /v1/proxies), or your own proxy as `http://`, `https://`, `socks5://` or `socks5h://` URL, credentials allowed (`socks5://user:pass@host:1080`). Your own proxy must be on a public address. Its credentials are never logged nor answered. Not with `proxy_country`. */
                            proxy?: string;
                            /** @description Go out through an operator proxy serving this country (ISO 3166-1 alpha-2, `de`), one in turn when several do. Not with `proxy`. */
                            proxy_country?: string;
                            /** @description The position the page's Geolocation API reports, permission granted (without it the page is denied). Goes well with `timezone`, `locale` and `proxy_country`. */
                            geolocation?: {
                                latitude: number;
                                longitude: number;
                                /** @description Metres; default 100. */
                                accuracy?: number;
                            };
                            /** @description Write the capture into your own S3-compatible bucket too (docs/destinations.md). An upload that fails is a 502 storage_destination_error, with no unit spent. */
                            storage?: {
                                /** @description One of your storage destinations (POST /v1/storage-destinations). */
                                destination: string;
                                /** @description The key under the destination's prefix; fields {id} {hash} {ext} {year} {month} {day} {host}. Default "{id}.{ext}". */
                                path?: string;
                                /** @description false: no copy is kept here (no image_url); always rendered anew. */
                                hosted?: boolean;
                            };
                        }[];
                        /** @description Where every job's `screenshot.*` event and the batch's `batch.completed` are POSTed (Standard Webhooks signature), under the same address rules as `url`. */
                        webhook_url?: string;
                    };
                };
            };
            responses: {
                /** @description Queued. */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The batch id (`bat_...`). */
                            batch_id: string;
                            /**
                             * Format: uri
                             * @description GET it for the batch and its jobs.
                             */
                            status_url: string;
                            /** @description One job per request, in the requests' order. */
                            jobs: {
                                /** @description The job id (`job_...`). */
                                id: string;
                                /** @enum {string} */
                                status: "queued";
                                /** Format: uri */
                                status_url: string;
                            }[];
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Monthly quota exhausted. */
                402: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            plan: string;
                            used: number;
                            limit: number;
                            /** Format: date-time */
                            resets_at: string;
                        };
                    };
                };
                /** @description Body larger than 3200 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Temporarily unavailable; retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/screenshots/batch/{batch_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * A batch of async captures, with the status of each
         * @description `status` is `running` until every job has ended, then `completed`; the counts `queued`, `rendering`, `succeeded` and `failed` add up to `total`. `jobs` are in the requests' order, each as GET /v1/screenshots/{id} answers it.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The batch id (`bat_...`). */
                    batch_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            batch_id: string;
                            status: "running" | "completed";
                            /** Format: uri */
                            status_url: string;
                            /** Format: date-time */
                            created_at: string;
                            /** Format: date-time */
                            completed_at?: string;
                            total: number;
                            queued: number;
                            rendering: number;
                            succeeded: number;
                            failed: number;
                            jobs: ({
                                id: string;
                                status: "queued" | "rendering" | "succeeded" | "failed";
                                /** Format: uri */
                                status_url: string;
                            } & {
                                [key: string]: unknown;
                            })[];
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/render": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Signed render link: capture, then redirect to the hosted image
         * @description For `<img src>` in pages and emails. The capture options are query parameters with the body's names and rules (a list is repeated parameters; clip, headers, cookies, http_auth, a proxy URL, response_type, metadata, content, async, webhook_url, fresh, html, markdown and base_url are not allowed; cache_ttl is at least 60), plus `key_id`, `expires` (Unix seconds, at most 7 days ahead) and `signature`: lowercase hex HMAC-SHA256 of the canonical query (every parameter but `signature`, each name and value percent-encoded as RFC 3986, sorted by name then value, joined with `&`), keyed with the key's signing secret. A link answered from the result cache costs no quota unit; one that renders costs one. Link requests draw on the key's own per-minute window (the plan's link_requests_per_minute), not on the account's capture rate.
         */
        get: {
            parameters: {
                query: {
                    /** @description The API key's id. */
                    key_id: string;
                    /** @description Unix seconds; at most 7 days ahead. */
                    expires: string;
                    /** @description Lowercase hex HMAC-SHA256. */
                    signature: string;
                    /** @description The page to capture; any other option likewise. */
                    url: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description To the hosted image; Cache-Control allows caching up to the link's expiry or the image's, whichever is first. */
                302: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Monthly quota exhausted. */
                402: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            plan: string;
                            used: number;
                            limit: number;
                            /** Format: date-time */
                            resets_at: string;
                        };
                    };
                };
                /** @description A warning named in fail_on was found; nothing stored, no quota spent. */
                422: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description A message naming the warnings. */
                            error: string;
                            /** @enum {string} */
                            code: "capture_rejected";
                            /** @description The warnings `fail_on` named. */
                            warnings: {
                                /**
                                 * @description blank_image: one colour, or nearly. not_at_rest: the page was still changing when the settle wait ended. requests_pending: requests still loading at capture. fonts_not_loaded: web fonts still loading or failed. truncated: the image was cut at the size limit. banner_remaining: with block_cookie_banners, a consent layer still covers part of the page.
                                 * @enum {string}
                                 */
                                code: "blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining";
                                /** @description What was seen, for a human. */
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The target could not be reached. */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Temporarily unavailable; retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Render deadline passed. */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description A message naming the phase and the pending requests. */
                            error: string;
                            /** @enum {string} */
                            code: "render_timeout";
                            /**
                             * @description Where the capture was when its deadline passed: queue (a render slot), browser, navigation (the target's main document had not answered), load (the wait_until event), network (the network going quiet), selector (wait_for_selector), delay, actions (styles, scripts, click, banners), settle, capture (the image itself). Absent when the capture waited for the same render on another node.
                             * @enum {string}
                             */
                            phase?: "queue" | "browser" | "navigation" | "load" | "network" | "selector" | "delay" | "actions" | "settle" | "capture";
                            /** @description Up to 10 requests still loading, as origin and path (never the query). */
                            pending_requests?: string[];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/storage-destinations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's storage destinations, oldest first */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                id: string;
                                name: string;
                                /** @description null: AWS S3, the region's endpoint. */
                                endpoint: string | null;
                                region: string;
                                bucket: string;
                                /** @description Every key the service writes starts with it ("" for none). */
                                prefix: string;
                                path_style: boolean;
                                acl: "private" | "public-read";
                                /** Format: date-time */
                                created_at: string;
                                /**
                                 * Format: date-time
                                 * @description The last test write that succeeded.
                                 */
                                tested_at: string;
                            }[];
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /** Add a storage destination (your own S3-compatible bucket), tested first */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Your name for it. */
                        name: string;
                        /** @description https://host[:port] of an S3-compatible store (R2, MinIO, ...); absent: AWS S3. http only for a host:port EGRESS_ALLOWLIST names. */
                        endpoint?: string;
                        /** @description eu-west-1; `auto` for R2. */
                        region: string;
                        bucket: string;
                        /** @description Keys start with it. */
                        prefix?: string;
                        access_key_id: string;
                        /** @description Sealed at rest, never answered. */
                        secret_access_key: string;
                        /** @description Default: true with an endpoint, false for AWS. */
                        path_style?: boolean;
                        acl?: "private" | "public-read";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            name: string;
                            /** @description null: AWS S3, the region's endpoint. */
                            endpoint: string | null;
                            region: string;
                            bucket: string;
                            /** @description Every key the service writes starts with it ("" for none). */
                            prefix: string;
                            path_style: boolean;
                            acl: "private" | "public-read";
                            /** Format: date-time */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description The last test write that succeeded.
                             */
                            tested_at: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/storage-destinations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One storage destination */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The destination id, `dst_...`. */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            name: string;
                            /** @description null: AWS S3, the region's endpoint. */
                            endpoint: string | null;
                            region: string;
                            bucket: string;
                            /** @description Every key the service writes starts with it ("" for none). */
                            prefix: string;
                            path_style: boolean;
                            acl: "private" | "public-read";
                            /** Format: date-time */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description The last test write that succeeded.
                             */
                            tested_at: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a storage destination (the objects in the bucket stay) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The destination id, `dst_...`. */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/storage-destinations/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Test a storage destination again (a write and a delete) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The destination id, `dst_...`. */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            name: string;
                            /** @description null: AWS S3, the region's endpoint. */
                            endpoint: string | null;
                            region: string;
                            bucket: string;
                            /** @description Every key the service writes starts with it ("" for none). */
                            prefix: string;
                            path_style: boolean;
                            acl: "private" | "public-read";
                            /** Format: date-time */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description The last test write that succeeded.
                             */
                            tested_at: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/storage-destinations": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Dashboard (session): The account's storage destinations, oldest first */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                id: string;
                                name: string;
                                /** @description null: AWS S3, the region's endpoint. */
                                endpoint: string | null;
                                region: string;
                                bucket: string;
                                /** @description Every key the service writes starts with it ("" for none). */
                                prefix: string;
                                path_style: boolean;
                                acl: "private" | "public-read";
                                /** Format: date-time */
                                created_at: string;
                                /**
                                 * Format: date-time
                                 * @description The last test write that succeeded.
                                 */
                                tested_at: string;
                            }[];
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /** Dashboard (session): Add a storage destination (your own S3-compatible bucket), tested first */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description Your name for it. */
                        name: string;
                        /** @description https://host[:port] of an S3-compatible store (R2, MinIO, ...); absent: AWS S3. http only for a host:port EGRESS_ALLOWLIST names. */
                        endpoint?: string;
                        /** @description eu-west-1; `auto` for R2. */
                        region: string;
                        bucket: string;
                        /** @description Keys start with it. */
                        prefix?: string;
                        access_key_id: string;
                        /** @description Sealed at rest, never answered. */
                        secret_access_key: string;
                        /** @description Default: true with an endpoint, false for AWS. */
                        path_style?: boolean;
                        acl?: "private" | "public-read";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            name: string;
                            /** @description null: AWS S3, the region's endpoint. */
                            endpoint: string | null;
                            region: string;
                            bucket: string;
                            /** @description Every key the service writes starts with it ("" for none). */
                            prefix: string;
                            path_style: boolean;
                            acl: "private" | "public-read";
                            /** Format: date-time */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description The last test write that succeeded.
                             */
                            tested_at: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/storage-destinations/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Dashboard (session): One storage destination */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The destination id, `dst_...`. */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            name: string;
                            /** @description null: AWS S3, the region's endpoint. */
                            endpoint: string | null;
                            region: string;
                            bucket: string;
                            /** @description Every key the service writes starts with it ("" for none). */
                            prefix: string;
                            path_style: boolean;
                            acl: "private" | "public-read";
                            /** Format: date-time */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description The last test write that succeeded.
                             */
                            tested_at: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Dashboard (session): Delete a storage destination (the objects in the bucket stay) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The destination id, `dst_...`. */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/storage-destinations/{id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Dashboard (session): Test a storage destination again (a write and a delete) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The destination id, `dst_...`. */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string;
                            name: string;
                            /** @description null: AWS S3, the region's endpoint. */
                            endpoint: string | null;
                            region: string;
                            bucket: string;
                            /** @description Every key the service writes starts with it ("" for none). */
                            prefix: string;
                            path_style: boolean;
                            acl: "private" | "public-read";
                            /** Format: date-time */
                            created_at: string;
                            /**
                             * Format: date-time
                             * @description The last test write that succeeded.
                             */
                            tested_at: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/screenshots/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * An async capture's status, or a screenshot record's
         * @description `{id, status, ...}`: status `queued`, `rendering`, `succeeded` (with the capture fields, `screenshot_id` being the record's id on Pro) or `failed` (with `error` and `code`). A record id (Pro) answers `succeeded` with the record.
         */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description A job id or a record id. */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            id: string | number;
                            status: "queued" | "rendering" | "succeeded" | "failed";
                        } & {
                            [key: string]: unknown;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a screenshot record and its image (own records only) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/monitors": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's monitors, most recent first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** @description The monitor id (`mon_...`). */
                                id: string;
                                name: string | null;
                                /** @description A URL monitor's target. */
                                url?: string;
                                /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                                html_bytes?: number;
                                /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                                html_sha256?: string;
                                options: {
                                    [key: string]: unknown;
                                };
                                every: string;
                                threshold: number;
                                ignore_selectors: string[];
                                webhook_url?: string;
                                status: "active" | "paused" | "paused_quota";
                                /** Format: date-time */
                                next_run_at: string;
                                /** Format: date-time */
                                created_at: string;
                                last_run_at: string | null;
                                last_change_at: string | null;
                            }[];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Create a monitor: scheduled captures with change detection (Pro)
         * @description Exactly one of `url` and `html`; `options` are capture options as POST /v1/screenshots takes them (without `async`, `response_type` and `webhook_url`), refused by the same rules, naming `options.<field>`.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string;
                        /** @description Absolute http(s) URL of the page, at most 2,048 characters. Exactly one of url, html or markdown. */
                        url?: string;
                        /** @description An HTML document to capture instead of a url (at most 1 MiB). Exactly one of url, html or markdown. Everything it loads goes through the same address rules as a url capture; its relative links resolve against base_url (without it they load nothing). Request bodies with html or markdown may be up to 1.5 MiB. */
                        html?: string;
                        options?: {
                            /**
                             * @description Default png; webp and pdf are Pro-only (plan data). pdf: a PDF of the page, with the pdf_* options.
                             * @enum {string}
                             */
                            format?: "png" | "jpeg" | "webp" | "pdf";
                            /** @description Viewport width in CSS pixels (default 1920), capped at the plan maximum. */
                            width?: number;
                            /** @description Viewport height in CSS pixels (default 1080), capped at the plan maximum. */
                            height?: number;
                            /** @description Capture the full scrollable page (cut at MAX_PAGE_HEIGHT, by default 65,535 device pixels; webp at 16,383, jpeg at 65,500). */
                            full_page?: boolean;
                            /** @description JPEG/WebP quality (default 80). */
                            quality?: number;
                            /** @description Bypass the cache and render anew (Pro). */
                            fresh?: boolean;
                            /** @description Device pixel ratio, 1 to 3 (Pro above 1). */
                            device_scale_factor?: number;
                            /** @enum {string} */
                            wait_until?: "load" | "domcontentloaded" | "networkidle0" | "networkidle2";
                            /** @description Extra wait before capture, ms. */
                            delay?: number;
                            wait_for_selector?: string;
                            /** @description Capture only this element. */
                            selector?: string;
                            dark_mode?: boolean;
                            reduced_motion?: boolean;
                            hide_selectors?: string[];
                            /** @description Transparent background (png/webp). */
                            omit_background?: boolean;
                            /** @description The User-Agent the page's requests send and navigator.userAgent reports; the Sec-CH-UA client hints and navigator.userAgentData follow it. Default: Chrome with the version of the service's Chromium (never HeadlessChrome). */
                            user_agent?: string;
                            /** @description A BCP 47 language tag: the Accept-Language header, navigator.language and the page's Intl formats. Default: US English (Accept-Language en-US,en;q=0.9). */
                            locale?: string;
                            /** @description An IANA time zone name for the page's clock. Default UTC, whatever the server's. */
                            timezone?: string;
                            /**
                             * @description The CSS media type the page is rendered for. Default screen.
                             * @enum {string}
                             */
                            media_type?: "screen" | "print";
                            /** @description CSS added to the page once it has loaded, before the capture (the page's own Content-Security-Policy does not block it). */
                            styles?: string;
                            /** @description JavaScript run in the page once it has loaded (after `styles`), before the capture; a promise it ends with is awaited within the render deadline. An error it throws is 400. */
                            scripts?: string;
                            /** @description An element clicked once the page has loaded (after `scripts`). */
                            click?: string;
                            /** @description An element scrolled to the top of the viewport before a viewport capture. */
                            scroll_into_view?: string;
                            /** @description A target that answers 4xx or 5xx ends in 502 target_error (no quota spent) instead of being captured. */
                            fail_on_http_error?: boolean;
                            /** @description Warnings that reject the capture (422 capture_rejected, no quota spent) instead of answering 201 with them: any of blank_image, not_at_rest, requests_pending, fonts_not_loaded, truncated, banner_remaining. Default none. */
                            fail_on?: ("blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining")[];
                            /** @description Seconds a result may be served from the cache: 0 (never) to 86400; default 900. `fresh` still forces a render. */
                            cache_ttl?: number;
                            /** @description A region of the page, in CSS px of the page (not of the viewport), captured alone. Not with full_page or selector. Cut to the image bounds (truncated) when larger. */
                            clip?: {
                                /** @description CSS px from the left of the page. */
                                x: number;
                                /** @description CSS px from the top of the page. */
                                y: number;
                                /** @description CSS px. */
                                width: number;
                                /** @description CSS px. */
                                height: number;
                            };
                            /** @description URL patterns whose requests the page does not make. `*` stands for any characters; a pattern matches the whole URL, query included: `*.png*`, `*://ads.example.com/*`, `*\/analytics.js*`. The page itself (the `url`) is always loaded. */
                            block_requests?: string[];
                            /** @description Kinds of request the page does not make. `other` is every kind not named here (beacons, manifests, prefetches, event streams, text tracks), never the page itself. */
                            block_resources?: ("image" | "media" | "font" | "stylesheet" | "script" | "xhr" | "fetch" | "websocket" | "other")[];
                            /** @description Extra request headers, `{"Name": "value"}`, sent with the requests to the target's own origin only (the page itself and its same-origin resources; never to other origins). Host, Cookie, Content-Length, Proxy-* and hop-by-hop headers are refused. */
                            headers?: {
                                [key: string]: string;
                            };
                            /** @description Cookies the browser holds for the target before it loads, scoped to the target's host (or to `domain`, a parent of it). `same_site: "None"` needs `secure: true`, and `secure` an https target. */
                            cookies?: {
                                name: string;
                                value: string;
                                /** @description A parent domain of the target's host (the cookie then reaches its subdomains too). Default: the target's host only. */
                                domain?: string;
                                path?: string;
                                secure?: boolean;
                                http_only?: boolean;
                                /** @enum {string} */
                                same_site?: "Strict" | "Lax" | "None" | "strict" | "lax" | "none";
                            }[];
                            /** @description HTTP Basic credentials, sent with the requests to the target's own origin only (never to other origins, nor after a redirect to one). Not with an Authorization header in `headers`. */
                            http_auth?: {
                                username: string;
                                password: string;
                            };
                            /** @description Ads blocked: requests matched by EasyList (shipped with the service; nothing is downloaded) are not made, and the ad boxes its element rules name are hidden. */
                            block_ads?: boolean;
                            /** @description Trackers blocked: requests matched by EasyPrivacy (shipped with the service; nothing is downloaded) are not made. */
                            block_trackers?: boolean;
                            /** @description Cookie consent banners dismissed before the capture, consent refused where the banner offers a choice (DuckDuckGo's autoconsent rules, shipped with the service), else hidden. */
                            block_cookie_banners?: boolean;
                            /** @description A device preset (GET /v1/devices lists them): its viewport, scale, mobile and touch emulation and user agent. Fields given explicitly win. */
                            device?: string;
                            /** @description Mobile emulation: the page's meta viewport applies, scrollbars overlay the page. Default: the device preset's, else false. */
                            mobile?: boolean;
                            /** @description Touch support: touch events, navigator.maxTouchPoints 5, (pointer: coarse). Default: the device preset's, else false. */
                            has_touch?: boolean;
                            /** @description Width and height swapped (the device preset's, or the request's), then capped at the plan's maximum like width and height. */
                            landscape?: boolean;
                            /** @description The 201 also carries `metadata`: the page title, description, final URL, HTTP status, Open Graph title, description and image, and icon URL (absent values are null). */
                            metadata?: boolean;
                            /**
                             * @description format pdf: the paper size. Default a4.
                             * @enum {string}
                             */
                            pdf_paper?: "a4" | "letter" | "legal" | "a3" | "tabloid";
                            /** @description format pdf: the paper turned on its side. Default false. */
                            pdf_landscape?: boolean;
                            /** @description format pdf: background colours and images printed. Default true. */
                            pdf_print_background?: boolean;
                            /** @description format pdf: one page as tall as the content (the paper's width), cut at the height bound. Default false. */
                            pdf_single_page?: boolean;
                            /** @description The delivered image's width in px (16 to the plan's max_width). The page still renders at width x height (or full page); the image is scaled to this. With only image_width, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                            image_width?: number;
                            /** @description The delivered image's height in px (16 to the plan's max_height). The page still renders at width x height (or full page); the image is scaled to this. With only image_height, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                            image_height?: number;
                            /**
                             * @description With both image_width and image_height: cover (default) scales the image to cover both and crops it from the top centre; contain scales it to fit inside both (no padding: one side may come out smaller); fill stretches it to both.
                             * @enum {string}
                             */
                            image_fit?: "cover" | "contain" | "fill";
                            /** @description With html or markdown: the absolute http(s) URL the document is shown at, which its relative links resolve against. Checked like url; nothing is fetched from it for the document itself. */
                            base_url?: string;
                            /** @description Keep the rendered page's content beside the image: "html" (its DOM as HTML), "text" (its visible text), "markdown" (its DOM as Markdown); any of them. Each is hosted with the image's retention, at most 5 MiB (cut there, content_truncated). The answer adds content: {html?, text?, markdown?} URLs. */
                            content?: ("html" | "text" | "markdown")[];
                            /** @description Where the page's traffic goes out: an operator proxy's id (GET /v1/proxies), or your own proxy as `http://`, `https://`, `socks5://` or `socks5h://` URL, credentials allowed (`socks5://user:pass@host:1080`). Your own proxy must be on a public address. Its credentials are never logged nor answered. Not with `proxy_country`. */
                            proxy?: string;
                            /** @description Go out through an operator proxy serving this country (ISO 3166-1 alpha-2, `de`), one in turn when several do. Not with `proxy`. */
                            proxy_country?: string;
                            /** @description The position the page's Geolocation API reports, permission granted (without it the page is denied). Goes well with `timezone`, `locale` and `proxy_country`. */
                            geolocation?: {
                                latitude: number;
                                longitude: number;
                                /** @description Metres; default 100. */
                                accuracy?: number;
                            };
                            /** @description Write the capture into your own S3-compatible bucket too (docs/destinations.md). An upload that fails is a 502 storage_destination_error, with no unit spent. */
                            storage?: {
                                /** @description One of your storage destinations (POST /v1/storage-destinations). */
                                destination: string;
                                /** @description The key under the destination's prefix; fields {id} {hash} {ext} {year} {month} {day} {host}. Default "{id}.{ext}". */
                                path?: string;
                                /** @description false: no copy is kept here (no image_url); always rendered anew. */
                                hosted?: boolean;
                            };
                        };
                        /** @description How often it runs; not below the plan's min_monitor_interval. */
                        every: "15m" | "1h" | "6h" | "1d" | "7d";
                        /**
                         * @description The share of pixels that must change for a run to count as changed.
                         * @default 0.001
                         */
                        threshold?: number;
                        /** @description Hidden before each capture, like hide_selectors. */
                        ignore_selectors?: string[];
                        /** @description Where monitor.changed and monitor.failed are sent (Standard Webhooks). */
                        webhook_url?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The monitor id (`mon_...`). */
                            id: string;
                            name: string | null;
                            /** @description A URL monitor's target. */
                            url?: string;
                            /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                            html_bytes?: number;
                            /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                            html_sha256?: string;
                            options: {
                                [key: string]: unknown;
                            };
                            every: string;
                            threshold: number;
                            ignore_selectors: string[];
                            webhook_url?: string;
                            status: "active" | "paused" | "paused_quota";
                            /** Format: date-time */
                            next_run_at: string;
                            /** Format: date-time */
                            created_at: string;
                            last_run_at: string | null;
                            last_change_at: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 1536 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/monitors/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A monitor */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The monitor id (`mon_...`). */
                            id: string;
                            name: string | null;
                            /** @description A URL monitor's target. */
                            url?: string;
                            /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                            html_bytes?: number;
                            /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                            html_sha256?: string;
                            options: {
                                [key: string]: unknown;
                            };
                            every: string;
                            threshold: number;
                            ignore_selectors: string[];
                            webhook_url?: string;
                            status: "active" | "paused" | "paused_quota";
                            /** Format: date-time */
                            next_run_at: string;
                            /** Format: date-time */
                            created_at: string;
                            last_run_at: string | null;
                            last_change_at: string | null;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Delete a monitor, its runs and their images */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * Change a monitor (pause, resume, every, threshold, name, webhook_url)
         * @description `status: "active"` resumes a paused monitor, one paused for its quota included; it is next due at its next slot. `webhook_url: null` stops its events.
         */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string;
                        status?: "active" | "paused";
                        /** @description How often it runs; not below the plan's min_monitor_interval. */
                        every?: "15m" | "1h" | "6h" | "1d" | "7d";
                        /** @description The share of pixels that must change for a run to count as changed. */
                        threshold?: number;
                        webhook_url?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The monitor id (`mon_...`). */
                            id: string;
                            name: string | null;
                            /** @description A URL monitor's target. */
                            url?: string;
                            /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                            html_bytes?: number;
                            /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                            html_sha256?: string;
                            options: {
                                [key: string]: unknown;
                            };
                            every: string;
                            threshold: number;
                            ignore_selectors: string[];
                            webhook_url?: string;
                            status: "active" | "paused" | "paused_quota";
                            /** Format: date-time */
                            next_run_at: string;
                            /** Format: date-time */
                            created_at: string;
                            last_run_at: string | null;
                            last_change_at: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/monitors/{id}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Run a monitor now
         * @description Answers 202 with the run once it is recorded; GET /v1/monitors/{id}/runs shows it end. Its slot in the schedule stays.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The run id (`run_...`). */
                            id: string;
                            /** @enum {string} */
                            status: "running";
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Conflict. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/monitors/{id}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A monitor's runs, most recent first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** @description The run id (`run_...`). */
                                id: string;
                                /** Format: date-time */
                                at: string;
                                status: "running" | "succeeded" | "failed";
                                changed: boolean | null;
                                changed_fraction: number | null;
                                image_url: string | null;
                                diff_url?: string;
                                error?: string;
                            }[];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Current-period quota consumption and the per-minute capture rate */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            plan: string;
                            used: number;
                            limit: number;
                            remaining: number;
                            /** Format: date-time */
                            period_start: string;
                            /** Format: date-time */
                            resets_at: string;
                            rate_limit: {
                                limit: number | null;
                                remaining: number | null;
                                reset_time: number | null;
                            };
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/demo/screenshot": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Landing-page demo: PNG 1280x720, 5 per day per client IP (not for integration) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        url: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            image_url: string;
                            cached: boolean;
                            /** Format: date-time */
                            expires_at: string;
                            /** @description What may be wrong with the image (docs/api.md, "Warnings"). */
                            warnings: {
                                /**
                                 * @description blank_image: one colour, or nearly. not_at_rest: the page was still changing when the settle wait ended. requests_pending: requests still loading at capture. fonts_not_loaded: web fonts still loading or failed. truncated: the image was cut at the size limit. banner_remaining: with block_cookie_banners, a consent layer still covers part of the page.
                                 * @enum {string}
                                 */
                                code: "blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining";
                                /** @description What was seen, for a human. */
                                message: string;
                            }[];
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 64 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description The target could not be reached. */
                502: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Temporarily unavailable; retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Render deadline passed. */
                504: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description A message naming the phase and the pending requests. */
                            error: string;
                            /** @enum {string} */
                            code: "render_timeout";
                            /**
                             * @description Where the capture was when its deadline passed: queue (a render slot), browser, navigation (the target's main document had not answered), load (the wait_until event), network (the network going quiet), selector (wait_for_selector), delay, actions (styles, scripts, click, banners), settle, capture (the image itself). Absent when the capture waited for the same render on another node.
                             * @enum {string}
                             */
                            phase?: "queue" | "browser" | "navigation" | "load" | "network" | "selector" | "delay" | "actions" | "settle" | "capture";
                            /** @description Up to 10 requests still loading, as origin and path (never the query). */
                            pending_requests?: string[];
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/images/{file}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A hosted screenshot (URL from image_url), or its content (URLs from content) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    file: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description The image bytes, or the content file (UTF-8 text). */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": unknown;
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Temporarily unavailable; retry after Retry-After seconds. */
                503: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/usage": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Usage for the signed-in account, with captures per UTC day this period */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            plan: string;
                            used: number;
                            limit: number;
                            remaining: number;
                            /** Format: date-time */
                            period_start: string;
                            /** Format: date-time */
                            resets_at: string;
                            rate_limit: {
                                limit: number | null;
                                remaining: number | null;
                                reset_time: number | null;
                            };
                        } & {
                            days: {
                                day: string;
                                count: number;
                            }[];
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/screenshots": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The signed-in account's screenshots (Pro), newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                id: number;
                                url: string;
                                format: string;
                                width: number;
                                height: number;
                                full_page: boolean;
                                quality: number;
                                device_scale_factor: number;
                                image_url: string;
                                /** Format: date-time */
                                created_at: string;
                                /** Format: date-time */
                                expires_at: string;
                            }[];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/screenshots/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete one of the signed-in account’s screenshots */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/monitors": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Dashboard (session): The account's monitors, most recent first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** @description The monitor id (`mon_...`). */
                                id: string;
                                name: string | null;
                                /** @description A URL monitor's target. */
                                url?: string;
                                /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                                html_bytes?: number;
                                /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                                html_sha256?: string;
                                options: {
                                    [key: string]: unknown;
                                };
                                every: string;
                                threshold: number;
                                ignore_selectors: string[];
                                webhook_url?: string;
                                status: "active" | "paused" | "paused_quota";
                                /** Format: date-time */
                                next_run_at: string;
                                /** Format: date-time */
                                created_at: string;
                                last_run_at: string | null;
                                last_change_at: string | null;
                            }[];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        /**
         * Dashboard (session): Create a monitor: scheduled captures with change detection (Pro)
         * @description Exactly one of `url` and `html`; `options` are capture options as POST /v1/screenshots takes them (without `async`, `response_type` and `webhook_url`), refused by the same rules, naming `options.<field>`.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string;
                        /** @description Absolute http(s) URL of the page, at most 2,048 characters. Exactly one of url, html or markdown. */
                        url?: string;
                        /** @description An HTML document to capture instead of a url (at most 1 MiB). Exactly one of url, html or markdown. Everything it loads goes through the same address rules as a url capture; its relative links resolve against base_url (without it they load nothing). Request bodies with html or markdown may be up to 1.5 MiB. */
                        html?: string;
                        options?: {
                            /**
                             * @description Default png; webp and pdf are Pro-only (plan data). pdf: a PDF of the page, with the pdf_* options.
                             * @enum {string}
                             */
                            format?: "png" | "jpeg" | "webp" | "pdf";
                            /** @description Viewport width in CSS pixels (default 1920), capped at the plan maximum. */
                            width?: number;
                            /** @description Viewport height in CSS pixels (default 1080), capped at the plan maximum. */
                            height?: number;
                            /** @description Capture the full scrollable page (cut at MAX_PAGE_HEIGHT, by default 65,535 device pixels; webp at 16,383, jpeg at 65,500). */
                            full_page?: boolean;
                            /** @description JPEG/WebP quality (default 80). */
                            quality?: number;
                            /** @description Bypass the cache and render anew (Pro). */
                            fresh?: boolean;
                            /** @description Device pixel ratio, 1 to 3 (Pro above 1). */
                            device_scale_factor?: number;
                            /** @enum {string} */
                            wait_until?: "load" | "domcontentloaded" | "networkidle0" | "networkidle2";
                            /** @description Extra wait before capture, ms. */
                            delay?: number;
                            wait_for_selector?: string;
                            /** @description Capture only this element. */
                            selector?: string;
                            dark_mode?: boolean;
                            reduced_motion?: boolean;
                            hide_selectors?: string[];
                            /** @description Transparent background (png/webp). */
                            omit_background?: boolean;
                            /** @description The User-Agent the page's requests send and navigator.userAgent reports; the Sec-CH-UA client hints and navigator.userAgentData follow it. Default: Chrome with the version of the service's Chromium (never HeadlessChrome). */
                            user_agent?: string;
                            /** @description A BCP 47 language tag: the Accept-Language header, navigator.language and the page's Intl formats. Default: US English (Accept-Language en-US,en;q=0.9). */
                            locale?: string;
                            /** @description An IANA time zone name for the page's clock. Default UTC, whatever the server's. */
                            timezone?: string;
                            /**
                             * @description The CSS media type the page is rendered for. Default screen.
                             * @enum {string}
                             */
                            media_type?: "screen" | "print";
                            /** @description CSS added to the page once it has loaded, before the capture (the page's own Content-Security-Policy does not block it). */
                            styles?: string;
                            /** @description JavaScript run in the page once it has loaded (after `styles`), before the capture; a promise it ends with is awaited within the render deadline. An error it throws is 400. */
                            scripts?: string;
                            /** @description An element clicked once the page has loaded (after `scripts`). */
                            click?: string;
                            /** @description An element scrolled to the top of the viewport before a viewport capture. */
                            scroll_into_view?: string;
                            /** @description A target that answers 4xx or 5xx ends in 502 target_error (no quota spent) instead of being captured. */
                            fail_on_http_error?: boolean;
                            /** @description Warnings that reject the capture (422 capture_rejected, no quota spent) instead of answering 201 with them: any of blank_image, not_at_rest, requests_pending, fonts_not_loaded, truncated, banner_remaining. Default none. */
                            fail_on?: ("blank_image" | "not_at_rest" | "requests_pending" | "fonts_not_loaded" | "truncated" | "banner_remaining")[];
                            /** @description Seconds a result may be served from the cache: 0 (never) to 86400; default 900. `fresh` still forces a render. */
                            cache_ttl?: number;
                            /** @description A region of the page, in CSS px of the page (not of the viewport), captured alone. Not with full_page or selector. Cut to the image bounds (truncated) when larger. */
                            clip?: {
                                /** @description CSS px from the left of the page. */
                                x: number;
                                /** @description CSS px from the top of the page. */
                                y: number;
                                /** @description CSS px. */
                                width: number;
                                /** @description CSS px. */
                                height: number;
                            };
                            /** @description URL patterns whose requests the page does not make. `*` stands for any characters; a pattern matches the whole URL, query included: `*.png*`, `*://ads.example.com/*`, `*\/analytics.js*`. The page itself (the `url`) is always loaded. */
                            block_requests?: string[];
                            /** @description Kinds of request the page does not make. `other` is every kind not named here (beacons, manifests, prefetches, event streams, text tracks), never the page itself. */
                            block_resources?: ("image" | "media" | "font" | "stylesheet" | "script" | "xhr" | "fetch" | "websocket" | "other")[];
                            /** @description Extra request headers, `{"Name": "value"}`, sent with the requests to the target's own origin only (the page itself and its same-origin resources; never to other origins). Host, Cookie, Content-Length, Proxy-* and hop-by-hop headers are refused. */
                            headers?: {
                                [key: string]: string;
                            };
                            /** @description Cookies the browser holds for the target before it loads, scoped to the target's host (or to `domain`, a parent of it). `same_site: "None"` needs `secure: true`, and `secure` an https target. */
                            cookies?: {
                                name: string;
                                value: string;
                                /** @description A parent domain of the target's host (the cookie then reaches its subdomains too). Default: the target's host only. */
                                domain?: string;
                                path?: string;
                                secure?: boolean;
                                http_only?: boolean;
                                /** @enum {string} */
                                same_site?: "Strict" | "Lax" | "None" | "strict" | "lax" | "none";
                            }[];
                            /** @description HTTP Basic credentials, sent with the requests to the target's own origin only (never to other origins, nor after a redirect to one). Not with an Authorization header in `headers`. */
                            http_auth?: {
                                username: string;
                                password: string;
                            };
                            /** @description Ads blocked: requests matched by EasyList (shipped with the service; nothing is downloaded) are not made, and the ad boxes its element rules name are hidden. */
                            block_ads?: boolean;
                            /** @description Trackers blocked: requests matched by EasyPrivacy (shipped with the service; nothing is downloaded) are not made. */
                            block_trackers?: boolean;
                            /** @description Cookie consent banners dismissed before the capture, consent refused where the banner offers a choice (DuckDuckGo's autoconsent rules, shipped with the service), else hidden. */
                            block_cookie_banners?: boolean;
                            /** @description A device preset (GET /v1/devices lists them): its viewport, scale, mobile and touch emulation and user agent. Fields given explicitly win. */
                            device?: string;
                            /** @description Mobile emulation: the page's meta viewport applies, scrollbars overlay the page. Default: the device preset's, else false. */
                            mobile?: boolean;
                            /** @description Touch support: touch events, navigator.maxTouchPoints 5, (pointer: coarse). Default: the device preset's, else false. */
                            has_touch?: boolean;
                            /** @description Width and height swapped (the device preset's, or the request's), then capped at the plan's maximum like width and height. */
                            landscape?: boolean;
                            /** @description The 201 also carries `metadata`: the page title, description, final URL, HTTP status, Open Graph title, description and image, and icon URL (absent values are null). */
                            metadata?: boolean;
                            /**
                             * @description format pdf: the paper size. Default a4.
                             * @enum {string}
                             */
                            pdf_paper?: "a4" | "letter" | "legal" | "a3" | "tabloid";
                            /** @description format pdf: the paper turned on its side. Default false. */
                            pdf_landscape?: boolean;
                            /** @description format pdf: background colours and images printed. Default true. */
                            pdf_print_background?: boolean;
                            /** @description format pdf: one page as tall as the content (the paper's width), cut at the height bound. Default false. */
                            pdf_single_page?: boolean;
                            /** @description The delivered image's width in px (16 to the plan's max_width). The page still renders at width x height (or full page); the image is scaled to this. With only image_width, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                            image_width?: number;
                            /** @description The delivered image's height in px (16 to the plan's max_height). The page still renders at width x height (or full page); the image is scaled to this. With only image_height, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf. */
                            image_height?: number;
                            /**
                             * @description With both image_width and image_height: cover (default) scales the image to cover both and crops it from the top centre; contain scales it to fit inside both (no padding: one side may come out smaller); fill stretches it to both.
                             * @enum {string}
                             */
                            image_fit?: "cover" | "contain" | "fill";
                            /** @description With html or markdown: the absolute http(s) URL the document is shown at, which its relative links resolve against. Checked like url; nothing is fetched from it for the document itself. */
                            base_url?: string;
                            /** @description Keep the rendered page's content beside the image: "html" (its DOM as HTML), "text" (its visible text), "markdown" (its DOM as Markdown); any of them. Each is hosted with the image's retention, at most 5 MiB (cut there, content_truncated). The answer adds content: {html?, text?, markdown?} URLs. */
                            content?: ("html" | "text" | "markdown")[];
                            /** @description Where the page's traffic goes out: an operator proxy's id (GET /v1/proxies), or your own proxy as `http://`, `https://`, `socks5://` or `socks5h://` URL, credentials allowed (`socks5://user:pass@host:1080`). Your own proxy must be on a public address. Its credentials are never logged nor answered. Not with `proxy_country`. */
                            proxy?: string;
                            /** @description Go out through an operator proxy serving this country (ISO 3166-1 alpha-2, `de`), one in turn when several do. Not with `proxy`. */
                            proxy_country?: string;
                            /** @description The position the page's Geolocation API reports, permission granted (without it the page is denied). Goes well with `timezone`, `locale` and `proxy_country`. */
                            geolocation?: {
                                latitude: number;
                                longitude: number;
                                /** @description Metres; default 100. */
                                accuracy?: number;
                            };
                            /** @description Write the capture into your own S3-compatible bucket too (docs/destinations.md). An upload that fails is a 502 storage_destination_error, with no unit spent. */
                            storage?: {
                                /** @description One of your storage destinations (POST /v1/storage-destinations). */
                                destination: string;
                                /** @description The key under the destination's prefix; fields {id} {hash} {ext} {year} {month} {day} {host}. Default "{id}.{ext}". */
                                path?: string;
                                /** @description false: no copy is kept here (no image_url); always rendered anew. */
                                hosted?: boolean;
                            };
                        };
                        /** @description How often it runs; not below the plan's min_monitor_interval. */
                        every: "15m" | "1h" | "6h" | "1d" | "7d";
                        /**
                         * @description The share of pixels that must change for a run to count as changed.
                         * @default 0.001
                         */
                        threshold?: number;
                        /** @description Hidden before each capture, like hide_selectors. */
                        ignore_selectors?: string[];
                        /** @description Where monitor.changed and monitor.failed are sent (Standard Webhooks). */
                        webhook_url?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                201: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The monitor id (`mon_...`). */
                            id: string;
                            name: string | null;
                            /** @description A URL monitor's target. */
                            url?: string;
                            /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                            html_bytes?: number;
                            /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                            html_sha256?: string;
                            options: {
                                [key: string]: unknown;
                            };
                            every: string;
                            threshold: number;
                            ignore_selectors: string[];
                            webhook_url?: string;
                            status: "active" | "paused" | "paused_quota";
                            /** Format: date-time */
                            next_run_at: string;
                            /** Format: date-time */
                            created_at: string;
                            last_run_at: string | null;
                            last_change_at: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 1536 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/monitors/{id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Dashboard (session): A monitor */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The monitor id (`mon_...`). */
                            id: string;
                            name: string | null;
                            /** @description A URL monitor's target. */
                            url?: string;
                            /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                            html_bytes?: number;
                            /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                            html_sha256?: string;
                            options: {
                                [key: string]: unknown;
                            };
                            every: string;
                            threshold: number;
                            ignore_selectors: string[];
                            webhook_url?: string;
                            status: "active" | "paused" | "paused_quota";
                            /** Format: date-time */
                            next_run_at: string;
                            /** Format: date-time */
                            created_at: string;
                            last_run_at: string | null;
                            last_change_at: string | null;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        /** Dashboard (session): Delete a monitor, its runs and their images */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        options?: never;
        head?: never;
        /**
         * Dashboard (session): Change a monitor (pause, resume, every, threshold, name, webhook_url)
         * @description `status: "active"` resumes a paused monitor, one paused for its quota included; it is next due at its next slot. `webhook_url: null` stops its events.
         */
        patch: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string;
                        status?: "active" | "paused";
                        /** @description How often it runs; not below the plan's min_monitor_interval. */
                        every?: "15m" | "1h" | "6h" | "1d" | "7d";
                        /** @description The share of pixels that must change for a run to count as changed. */
                        threshold?: number;
                        webhook_url?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The monitor id (`mon_...`). */
                            id: string;
                            name: string | null;
                            /** @description A URL monitor's target. */
                            url?: string;
                            /** @description An html monitor's document size in UTF-8 bytes. The document itself is kept for the runs and never answered. */
                            html_bytes?: number;
                            /** @description The SHA-256 (hex) of an html monitor's document, as UTF-8. */
                            html_sha256?: string;
                            options: {
                                [key: string]: unknown;
                            };
                            every: string;
                            threshold: number;
                            ignore_selectors: string[];
                            webhook_url?: string;
                            status: "active" | "paused" | "paused_quota";
                            /** Format: date-time */
                            next_run_at: string;
                            /** Format: date-time */
                            created_at: string;
                            last_run_at: string | null;
                            last_change_at: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        trace?: never;
    };
    "/v1/account/monitors/{id}/run": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Dashboard (session): Run a monitor now
         * @description Answers 202 with the run once it is recorded; GET /v1/monitors/{id}/runs shows it end. Its slot in the schedule stays.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                202: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description The run id (`run_...`). */
                            id: string;
                            /** @enum {string} */
                            status: "running";
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Conflict. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/account/monitors/{id}/runs": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Dashboard (session): A monitor's runs, most recent first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    cursor?: string;
                };
                header?: never;
                path: {
                    /** @description The monitor id (`mon_...`). */
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** @description The run id (`run_...`). */
                                id: string;
                                /** Format: date-time */
                                at: string;
                                status: "running" | "succeeded" | "failed";
                                changed: boolean | null;
                                changed_fraction: number | null;
                                image_url: string | null;
                                diff_url?: string;
                                error?: string;
                            }[];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's webhook signing secret */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description `whsec_` + base64 of 32 bytes; the HMAC key is the decoded bytes. */
                            secret: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/secret/rotate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Replace the webhook secret; every delivery from now on is signed with the new one */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description `whsec_` + base64 of 32 bytes; the HMAC key is the decoded bytes. */
                            secret: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/deliveries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The account's newest webhook deliveries (at most 50) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** @description The `webhook-id` of every attempt. */
                                id: string;
                                job_id: string;
                                url: string;
                                event_type: string;
                                status: "pending" | "delivered" | "failed" | "gone";
                                attempts: number;
                                next_attempt_at: string | null;
                                last_status: number | null;
                                last_error: string | null;
                                /** Format: date-time */
                                created_at: string;
                                /** Format: date-time */
                                updated_at: string;
                            }[];
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/deliveries/{id}/attempts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** A delivery's attempts (the newest 50), oldest first */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                /** Format: date-time */
                                attempted_at: string;
                                status_code: number | null;
                                error: string | null;
                                duration_ms: number;
                            }[];
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/webhooks/deliveries/{id}/resend": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Send a finished delivery again now (same webhook-id); 409 while it is being sent or waiting, or with 10 of the account waiting; draws on the non-capture rate */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            success: boolean;
                            message: string;
                        };
                    };
                };
                /** @description Missing or invalid credentials. */
                401: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Cross-site request refused. */
                403: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Not found. */
                404: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Conflict. */
                409: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Rate limit exceeded (docs/errors.md). */
                429: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            error: string;
                            message: string;
                            /** @enum {boolean} */
                            success: false;
                            limit: number;
                            used: number;
                            remaining: number;
                            /** @description Unix seconds when the window resets. */
                            reset_time: number;
                            plan?: string;
                        };
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/billing/webhook": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Payment provider events (Stripe webhook endpoint)
         * @description Signed with the `Stripe-Signature` header (HMAC-SHA256, 300-second tolerance, several `v1` signatures accepted). Each event id is applied once; events older than the recorded state are acknowledged and ignored.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {boolean} */
                            received: true;
                            /**
                             * @description applied; ignored (older than the recorded state, or not about the account's subscription); duplicate; unknown_account; unhandled (a type billing does not act on).
                             * @enum {string}
                             */
                            outcome: "applied" | "ignored" | "duplicate" | "unknown_account" | "unhandled";
                        };
                    };
                };
                /** @description Malformed request; the message names the problem. */
                400: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Body larger than 512 KiB. */
                413: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
                /** @description Unexpected server error. */
                500: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["ErrorBody"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        /** @description Error answer (docs/errors.md). */
        ErrorBody: {
            /** @description A message naming the problem. */
            error: string;
            /** @description Stable machine-readable code (400 and 5xx answers). */
            code?: string;
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
