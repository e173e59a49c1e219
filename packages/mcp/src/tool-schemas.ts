/**
 * Generated from openapi.json (`npm run openapi:types`, scripts/write-mcp-schema.ts): do not
 * edit. The tools' input JSON Schemas, with the service's own descriptions.
 */

export interface ObjectSchema {
  type: 'object';
  properties: Record<string, object>;
  required?: string[];
  [keyword: string]: unknown;
}

/** POST /v1/screenshots's body less async, response_type, webhook_url. */
export const CAPTURE_OPTIONS_SCHEMA: ObjectSchema = {
  "type": "object",
  "properties": {
    "url": {
      "type": "string",
      "description": "Absolute http(s) URL of the page, at most 2,048 characters. Exactly one of url, html or markdown."
    },
    "format": {
      "type": "string",
      "enum": [
        "png",
        "jpeg",
        "webp",
        "pdf"
      ],
      "description": "Default png; webp and pdf are Pro-only (plan data). pdf: a PDF of the page, with the pdf_* options."
    },
    "width": {
      "type": "integer",
      "minimum": 1,
      "description": "Viewport width in CSS pixels (default 1920), capped at the plan maximum."
    },
    "height": {
      "type": "integer",
      "minimum": 1,
      "description": "Viewport height in CSS pixels (default 1080), capped at the plan maximum."
    },
    "full_page": {
      "type": "boolean",
      "description": "Capture the full scrollable page (cut at MAX_PAGE_HEIGHT, by default 65,535 device pixels; webp at 16,383, jpeg at 65,500)."
    },
    "quality": {
      "type": "integer",
      "minimum": 1,
      "maximum": 100,
      "description": "JPEG/WebP quality (default 80)."
    },
    "fresh": {
      "type": "boolean",
      "description": "Bypass the cache and render anew (Pro)."
    },
    "device_scale_factor": {
      "type": "number",
      "minimum": 1,
      "maximum": 3,
      "description": "Device pixel ratio, 1 to 3 (Pro above 1)."
    },
    "wait_until": {
      "type": "string",
      "enum": [
        "load",
        "domcontentloaded",
        "networkidle0",
        "networkidle2"
      ]
    },
    "delay": {
      "type": "integer",
      "minimum": 0,
      "maximum": 10000,
      "description": "Extra wait before capture, ms."
    },
    "wait_for_selector": {
      "type": "string",
      "minLength": 1,
      "maxLength": 500
    },
    "selector": {
      "allOf": [
        {
          "type": "string",
          "minLength": 1,
          "maxLength": 500
        }
      ],
      "description": "Capture only this element."
    },
    "dark_mode": {
      "type": "boolean"
    },
    "reduced_motion": {
      "type": "boolean"
    },
    "hide_selectors": {
      "type": "array",
      "items": {
        "type": "string",
        "minLength": 1,
        "maxLength": 500
      },
      "maxItems": 50
    },
    "omit_background": {
      "type": "boolean",
      "description": "Transparent background (png/webp)."
    },
    "user_agent": {
      "type": "string",
      "minLength": 1,
      "maxLength": 512,
      "description": "The User-Agent the page's requests send and navigator.userAgent reports; the Sec-CH-UA client hints and navigator.userAgentData follow it. Default: Chrome with the version of the service's Chromium (never HeadlessChrome)."
    },
    "locale": {
      "type": "string",
      "minLength": 1,
      "maxLength": 35,
      "description": "A BCP 47 language tag: the Accept-Language header, navigator.language and the page's Intl formats. Default: US English (Accept-Language en-US,en;q=0.9)."
    },
    "timezone": {
      "type": "string",
      "minLength": 1,
      "maxLength": 64,
      "description": "An IANA time zone name for the page's clock. Default UTC, whatever the server's."
    },
    "media_type": {
      "type": "string",
      "enum": [
        "screen",
        "print"
      ],
      "description": "The CSS media type the page is rendered for. Default screen."
    },
    "styles": {
      "type": "string",
      "minLength": 1,
      "maxLength": 32768,
      "description": "CSS added to the page once it has loaded, before the capture (the page's own Content-Security-Policy does not block it)."
    },
    "scripts": {
      "type": "string",
      "minLength": 1,
      "maxLength": 32768,
      "description": "JavaScript run in the page once it has loaded (after `styles`), before the capture; a promise it ends with is awaited within the render deadline. An error it throws is 400."
    },
    "click": {
      "type": "string",
      "minLength": 1,
      "maxLength": 500,
      "description": "An element clicked once the page has loaded (after `scripts`)."
    },
    "scroll_into_view": {
      "type": "string",
      "minLength": 1,
      "maxLength": 500,
      "description": "An element scrolled to the top of the viewport before a viewport capture."
    },
    "fail_on_http_error": {
      "type": "boolean",
      "description": "A target that answers 4xx or 5xx ends in 502 target_error (no quota spent) instead of being captured."
    },
    "fail_on": {
      "type": "array",
      "items": {
        "type": "string",
        "enum": [
          "blank_image",
          "not_at_rest",
          "requests_pending",
          "fonts_not_loaded",
          "truncated",
          "banner_remaining"
        ]
      },
      "uniqueItems": true,
      "maxItems": 6,
      "description": "Warnings that reject the capture (422 capture_rejected, no quota spent) instead of answering 201 with them: any of blank_image, not_at_rest, requests_pending, fonts_not_loaded, truncated, banner_remaining. Default none."
    },
    "cache_ttl": {
      "type": "integer",
      "minimum": 0,
      "maximum": 86400,
      "description": "Seconds a result may be served from the cache: 0 (never) to 86400; default 900. `fresh` still forces a render."
    },
    "clip": {
      "type": "object",
      "required": [
        "x",
        "y",
        "width",
        "height"
      ],
      "properties": {
        "x": {
          "type": "number",
          "minimum": 0,
          "maximum": 100000,
          "description": "CSS px from the left of the page."
        },
        "y": {
          "type": "number",
          "minimum": 0,
          "maximum": 100000,
          "description": "CSS px from the top of the page."
        },
        "width": {
          "type": "number",
          "minimum": 1,
          "maximum": 100000,
          "description": "CSS px."
        },
        "height": {
          "type": "number",
          "minimum": 1,
          "maximum": 100000,
          "description": "CSS px."
        }
      },
      "additionalProperties": false,
      "description": "A region of the page, in CSS px of the page (not of the viewport), captured alone. Not with full_page or selector. Cut to the image bounds (truncated) when larger."
    },
    "block_requests": {
      "type": "array",
      "items": {
        "type": "string",
        "minLength": 1,
        "maxLength": 1024
      },
      "maxItems": 50,
      "description": "URL patterns whose requests the page does not make. `*` stands for any characters; a pattern matches the whole URL, query included: `*.png*`, `*://ads.example.com/*`, `*/analytics.js*`. The page itself (the `url`) is always loaded."
    },
    "block_resources": {
      "type": "array",
      "items": {
        "type": "string",
        "enum": [
          "image",
          "media",
          "font",
          "stylesheet",
          "script",
          "xhr",
          "fetch",
          "websocket",
          "other"
        ]
      },
      "maxItems": 9,
      "description": "Kinds of request the page does not make. `other` is every kind not named here (beacons, manifests, prefetches, event streams, text tracks), never the page itself."
    },
    "headers": {
      "type": "object",
      "maxProperties": 20,
      "description": "Extra request headers, `{\"Name\": \"value\"}`, sent with the requests to the target's own origin only (the page itself and its same-origin resources; never to other origins). Host, Cookie, Content-Length, Proxy-* and hop-by-hop headers are refused.",
      "additionalProperties": {
        "type": "string",
        "maxLength": 1024
      }
    },
    "cookies": {
      "type": "array",
      "items": {
        "type": "object",
        "required": [
          "name",
          "value"
        ],
        "properties": {
          "name": {
            "type": "string",
            "minLength": 1
          },
          "value": {
            "type": "string"
          },
          "domain": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1024,
            "description": "A parent domain of the target's host (the cookie then reaches its subdomains too). Default: the target's host only."
          },
          "path": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1024
          },
          "secure": {
            "type": "boolean"
          },
          "http_only": {
            "type": "boolean"
          },
          "same_site": {
            "type": "string",
            "enum": [
              "Strict",
              "Lax",
              "None",
              "strict",
              "lax",
              "none"
            ]
          }
        },
        "additionalProperties": false
      },
      "maxItems": 50,
      "description": "Cookies the browser holds for the target before it loads, scoped to the target's host (or to `domain`, a parent of it). `same_site: \"None\"` needs `secure: true`, and `secure` an https target."
    },
    "http_auth": {
      "type": "object",
      "required": [
        "username",
        "password"
      ],
      "properties": {
        "username": {
          "type": "string",
          "maxLength": 256
        },
        "password": {
          "type": "string",
          "maxLength": 256
        }
      },
      "additionalProperties": false,
      "description": "HTTP Basic credentials, sent with the requests to the target's own origin only (never to other origins, nor after a redirect to one). Not with an Authorization header in `headers`."
    },
    "block_ads": {
      "type": "boolean",
      "description": "Ads blocked: requests matched by EasyList (shipped with the service; nothing is downloaded) are not made, and the ad boxes its element rules name are hidden."
    },
    "block_trackers": {
      "type": "boolean",
      "description": "Trackers blocked: requests matched by EasyPrivacy (shipped with the service; nothing is downloaded) are not made."
    },
    "block_cookie_banners": {
      "type": "boolean",
      "description": "Cookie consent banners dismissed before the capture, consent refused where the banner offers a choice (DuckDuckGo's autoconsent rules, shipped with the service), else hidden."
    },
    "device": {
      "type": "string",
      "minLength": 1,
      "maxLength": 64,
      "description": "A device preset (GET /v1/devices lists them): its viewport, scale, mobile and touch emulation and user agent. Fields given explicitly win."
    },
    "mobile": {
      "type": "boolean",
      "description": "Mobile emulation: the page's meta viewport applies, scrollbars overlay the page. Default: the device preset's, else false."
    },
    "has_touch": {
      "type": "boolean",
      "description": "Touch support: touch events, navigator.maxTouchPoints 5, (pointer: coarse). Default: the device preset's, else false."
    },
    "landscape": {
      "type": "boolean",
      "description": "Width and height swapped (the device preset's, or the request's), then capped at the plan's maximum like width and height."
    },
    "metadata": {
      "type": "boolean",
      "description": "The 201 also carries `metadata`: the page title, description, final URL, HTTP status, Open Graph title, description and image, and icon URL (absent values are null)."
    },
    "pdf_paper": {
      "type": "string",
      "enum": [
        "a4",
        "letter",
        "legal",
        "a3",
        "tabloid"
      ],
      "description": "format pdf: the paper size. Default a4."
    },
    "pdf_landscape": {
      "type": "boolean",
      "description": "format pdf: the paper turned on its side. Default false."
    },
    "pdf_print_background": {
      "type": "boolean",
      "description": "format pdf: background colours and images printed. Default true."
    },
    "pdf_single_page": {
      "type": "boolean",
      "description": "format pdf: one page as tall as the content (the paper's width), cut at the height bound. Default false."
    },
    "image_width": {
      "type": "integer",
      "minimum": 16,
      "description": "The delivered image's width in px (16 to the plan's max_width). The page still renders at width x height (or full page); the image is scaled to this. With only image_width, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf."
    },
    "image_height": {
      "type": "integer",
      "minimum": 16,
      "description": "The delivered image's height in px (16 to the plan's max_height). The page still renders at width x height (or full page); the image is scaled to this. With only image_height, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf."
    },
    "image_fit": {
      "type": "string",
      "enum": [
        "cover",
        "contain",
        "fill"
      ],
      "description": "With both image_width and image_height: cover (default) scales the image to cover both and crops it from the top centre; contain scales it to fit inside both (no padding: one side may come out smaller); fill stretches it to both."
    },
    "html": {
      "type": "string",
      "minLength": 1,
      "maxLength": 1048576,
      "description": "An HTML document to capture instead of a url (at most 1 MiB). Exactly one of url, html or markdown. Everything it loads goes through the same address rules as a url capture; its relative links resolve against base_url (without it they load nothing). Request bodies with html or markdown may be up to 1.5 MiB."
    },
    "markdown": {
      "type": "string",
      "minLength": 1,
      "maxLength": 262144,
      "description": "GitHub-flavoured Markdown to capture instead of a url (at most 256 KiB), rendered as a readable page in the service's stylesheet: light, or dark with dark_mode. Exactly one of url, html or markdown; base_url as for html."
    },
    "base_url": {
      "type": "string",
      "description": "With html or markdown: the absolute http(s) URL the document is shown at, which its relative links resolve against. Checked like url; nothing is fetched from it for the document itself."
    },
    "content": {
      "type": "array",
      "items": {
        "type": "string",
        "enum": [
          "html",
          "text",
          "markdown"
        ]
      },
      "uniqueItems": true,
      "maxItems": 3,
      "description": "Keep the rendered page's content beside the image: \"html\" (its DOM as HTML), \"text\" (its visible text), \"markdown\" (its DOM as Markdown); any of them. Each is hosted with the image's retention, at most 5 MiB (cut there, content_truncated). The answer adds content: {html?, text?, markdown?} URLs."
    },
    "proxy": {
      "type": "string",
      "minLength": 1,
      "maxLength": 2048,
      "description": "Where the page's traffic goes out: an operator proxy's id (GET /v1/proxies), or your own proxy as `http://`, `https://`, `socks5://` or `socks5h://` URL, credentials allowed (`socks5://user:pass@host:1080`). Your own proxy must be on a public address. Its credentials are never logged nor answered. Not with `proxy_country`."
    },
    "proxy_country": {
      "type": "string",
      "minLength": 2,
      "maxLength": 2,
      "description": "Go out through an operator proxy serving this country (ISO 3166-1 alpha-2, `de`), one in turn when several do. Not with `proxy`."
    },
    "geolocation": {
      "type": "object",
      "required": [
        "latitude",
        "longitude"
      ],
      "properties": {
        "latitude": {
          "type": "number",
          "minimum": -90,
          "maximum": 90
        },
        "longitude": {
          "type": "number",
          "minimum": -180,
          "maximum": 180
        },
        "accuracy": {
          "type": "number",
          "minimum": 0,
          "maximum": 100000,
          "description": "Metres; default 100."
        }
      },
      "additionalProperties": false,
      "description": "The position the page's Geolocation API reports, permission granted (without it the page is denied). Goes well with `timezone`, `locale` and `proxy_country`."
    },
    "storage": {
      "type": "object",
      "required": [
        "destination"
      ],
      "properties": {
        "destination": {
          "type": "string",
          "pattern": "^dst_[0-9A-Za-z]{24}$",
          "description": "One of your storage destinations (POST /v1/storage-destinations)."
        },
        "path": {
          "type": "string",
          "minLength": 1,
          "maxLength": 512,
          "description": "The key under the destination's prefix; fields {id} {hash} {ext} {year} {month} {day} {host}. Default \"{id}.{ext}\"."
        },
        "hosted": {
          "type": "boolean",
          "description": "false: no copy is kept here (no image_url); always rendered anew."
        }
      },
      "additionalProperties": false,
      "description": "Write the capture into your own S3-compatible bucket too (docs/destinations.md). An upload that fails is a 502 storage_destination_error, with no unit spent."
    }
  },
  "additionalProperties": false
};

/** POST /v1/monitors's body. */
export const MONITOR_REQUEST_SCHEMA: ObjectSchema = {
  "type": "object",
  "required": [
    "every"
  ],
  "properties": {
    "name": {
      "type": "string",
      "minLength": 1,
      "maxLength": 200
    },
    "url": {
      "type": "string",
      "description": "Absolute http(s) URL of the page, at most 2,048 characters. Exactly one of url, html or markdown."
    },
    "html": {
      "type": "string",
      "minLength": 1,
      "maxLength": 1048576,
      "description": "An HTML document to capture instead of a url (at most 1 MiB). Exactly one of url, html or markdown. Everything it loads goes through the same address rules as a url capture; its relative links resolve against base_url (without it they load nothing). Request bodies with html or markdown may be up to 1.5 MiB."
    },
    "options": {
      "type": "object",
      "properties": {
        "format": {
          "type": "string",
          "enum": [
            "png",
            "jpeg",
            "webp",
            "pdf"
          ],
          "description": "Default png; webp and pdf are Pro-only (plan data). pdf: a PDF of the page, with the pdf_* options."
        },
        "width": {
          "type": "integer",
          "minimum": 1,
          "description": "Viewport width in CSS pixels (default 1920), capped at the plan maximum."
        },
        "height": {
          "type": "integer",
          "minimum": 1,
          "description": "Viewport height in CSS pixels (default 1080), capped at the plan maximum."
        },
        "full_page": {
          "type": "boolean",
          "description": "Capture the full scrollable page (cut at MAX_PAGE_HEIGHT, by default 65,535 device pixels; webp at 16,383, jpeg at 65,500)."
        },
        "quality": {
          "type": "integer",
          "minimum": 1,
          "maximum": 100,
          "description": "JPEG/WebP quality (default 80)."
        },
        "fresh": {
          "type": "boolean",
          "description": "Bypass the cache and render anew (Pro)."
        },
        "device_scale_factor": {
          "type": "number",
          "minimum": 1,
          "maximum": 3,
          "description": "Device pixel ratio, 1 to 3 (Pro above 1)."
        },
        "wait_until": {
          "type": "string",
          "enum": [
            "load",
            "domcontentloaded",
            "networkidle0",
            "networkidle2"
          ]
        },
        "delay": {
          "type": "integer",
          "minimum": 0,
          "maximum": 10000,
          "description": "Extra wait before capture, ms."
        },
        "wait_for_selector": {
          "type": "string",
          "minLength": 1,
          "maxLength": 500
        },
        "selector": {
          "allOf": [
            {
              "type": "string",
              "minLength": 1,
              "maxLength": 500
            }
          ],
          "description": "Capture only this element."
        },
        "dark_mode": {
          "type": "boolean"
        },
        "reduced_motion": {
          "type": "boolean"
        },
        "hide_selectors": {
          "type": "array",
          "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": 500
          },
          "maxItems": 50
        },
        "omit_background": {
          "type": "boolean",
          "description": "Transparent background (png/webp)."
        },
        "user_agent": {
          "type": "string",
          "minLength": 1,
          "maxLength": 512,
          "description": "The User-Agent the page's requests send and navigator.userAgent reports; the Sec-CH-UA client hints and navigator.userAgentData follow it. Default: Chrome with the version of the service's Chromium (never HeadlessChrome)."
        },
        "locale": {
          "type": "string",
          "minLength": 1,
          "maxLength": 35,
          "description": "A BCP 47 language tag: the Accept-Language header, navigator.language and the page's Intl formats. Default: US English (Accept-Language en-US,en;q=0.9)."
        },
        "timezone": {
          "type": "string",
          "minLength": 1,
          "maxLength": 64,
          "description": "An IANA time zone name for the page's clock. Default UTC, whatever the server's."
        },
        "media_type": {
          "type": "string",
          "enum": [
            "screen",
            "print"
          ],
          "description": "The CSS media type the page is rendered for. Default screen."
        },
        "styles": {
          "type": "string",
          "minLength": 1,
          "maxLength": 32768,
          "description": "CSS added to the page once it has loaded, before the capture (the page's own Content-Security-Policy does not block it)."
        },
        "scripts": {
          "type": "string",
          "minLength": 1,
          "maxLength": 32768,
          "description": "JavaScript run in the page once it has loaded (after `styles`), before the capture; a promise it ends with is awaited within the render deadline. An error it throws is 400."
        },
        "click": {
          "type": "string",
          "minLength": 1,
          "maxLength": 500,
          "description": "An element clicked once the page has loaded (after `scripts`)."
        },
        "scroll_into_view": {
          "type": "string",
          "minLength": 1,
          "maxLength": 500,
          "description": "An element scrolled to the top of the viewport before a viewport capture."
        },
        "fail_on_http_error": {
          "type": "boolean",
          "description": "A target that answers 4xx or 5xx ends in 502 target_error (no quota spent) instead of being captured."
        },
        "fail_on": {
          "type": "array",
          "items": {
            "type": "string",
            "enum": [
              "blank_image",
              "not_at_rest",
              "requests_pending",
              "fonts_not_loaded",
              "truncated",
              "banner_remaining"
            ]
          },
          "uniqueItems": true,
          "maxItems": 6,
          "description": "Warnings that reject the capture (422 capture_rejected, no quota spent) instead of answering 201 with them: any of blank_image, not_at_rest, requests_pending, fonts_not_loaded, truncated, banner_remaining. Default none."
        },
        "cache_ttl": {
          "type": "integer",
          "minimum": 0,
          "maximum": 86400,
          "description": "Seconds a result may be served from the cache: 0 (never) to 86400; default 900. `fresh` still forces a render."
        },
        "clip": {
          "type": "object",
          "required": [
            "x",
            "y",
            "width",
            "height"
          ],
          "properties": {
            "x": {
              "type": "number",
              "minimum": 0,
              "maximum": 100000,
              "description": "CSS px from the left of the page."
            },
            "y": {
              "type": "number",
              "minimum": 0,
              "maximum": 100000,
              "description": "CSS px from the top of the page."
            },
            "width": {
              "type": "number",
              "minimum": 1,
              "maximum": 100000,
              "description": "CSS px."
            },
            "height": {
              "type": "number",
              "minimum": 1,
              "maximum": 100000,
              "description": "CSS px."
            }
          },
          "additionalProperties": false,
          "description": "A region of the page, in CSS px of the page (not of the viewport), captured alone. Not with full_page or selector. Cut to the image bounds (truncated) when larger."
        },
        "block_requests": {
          "type": "array",
          "items": {
            "type": "string",
            "minLength": 1,
            "maxLength": 1024
          },
          "maxItems": 50,
          "description": "URL patterns whose requests the page does not make. `*` stands for any characters; a pattern matches the whole URL, query included: `*.png*`, `*://ads.example.com/*`, `*/analytics.js*`. The page itself (the `url`) is always loaded."
        },
        "block_resources": {
          "type": "array",
          "items": {
            "type": "string",
            "enum": [
              "image",
              "media",
              "font",
              "stylesheet",
              "script",
              "xhr",
              "fetch",
              "websocket",
              "other"
            ]
          },
          "maxItems": 9,
          "description": "Kinds of request the page does not make. `other` is every kind not named here (beacons, manifests, prefetches, event streams, text tracks), never the page itself."
        },
        "headers": {
          "type": "object",
          "maxProperties": 20,
          "description": "Extra request headers, `{\"Name\": \"value\"}`, sent with the requests to the target's own origin only (the page itself and its same-origin resources; never to other origins). Host, Cookie, Content-Length, Proxy-* and hop-by-hop headers are refused.",
          "additionalProperties": {
            "type": "string",
            "maxLength": 1024
          }
        },
        "cookies": {
          "type": "array",
          "items": {
            "type": "object",
            "required": [
              "name",
              "value"
            ],
            "properties": {
              "name": {
                "type": "string",
                "minLength": 1
              },
              "value": {
                "type": "string"
              },
              "domain": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1024,
                "description": "A parent domain of the target's host (the cookie then reaches its subdomains too). Default: the target's host only."
              },
              "path": {
                "type": "string",
                "minLength": 1,
                "maxLength": 1024
              },
              "secure": {
                "type": "boolean"
              },
              "http_only": {
                "type": "boolean"
              },
              "same_site": {
                "type": "string",
                "enum": [
                  "Strict",
                  "Lax",
                  "None",
                  "strict",
                  "lax",
                  "none"
                ]
              }
            },
            "additionalProperties": false
          },
          "maxItems": 50,
          "description": "Cookies the browser holds for the target before it loads, scoped to the target's host (or to `domain`, a parent of it). `same_site: \"None\"` needs `secure: true`, and `secure` an https target."
        },
        "http_auth": {
          "type": "object",
          "required": [
            "username",
            "password"
          ],
          "properties": {
            "username": {
              "type": "string",
              "maxLength": 256
            },
            "password": {
              "type": "string",
              "maxLength": 256
            }
          },
          "additionalProperties": false,
          "description": "HTTP Basic credentials, sent with the requests to the target's own origin only (never to other origins, nor after a redirect to one). Not with an Authorization header in `headers`."
        },
        "block_ads": {
          "type": "boolean",
          "description": "Ads blocked: requests matched by EasyList (shipped with the service; nothing is downloaded) are not made, and the ad boxes its element rules name are hidden."
        },
        "block_trackers": {
          "type": "boolean",
          "description": "Trackers blocked: requests matched by EasyPrivacy (shipped with the service; nothing is downloaded) are not made."
        },
        "block_cookie_banners": {
          "type": "boolean",
          "description": "Cookie consent banners dismissed before the capture, consent refused where the banner offers a choice (DuckDuckGo's autoconsent rules, shipped with the service), else hidden."
        },
        "device": {
          "type": "string",
          "minLength": 1,
          "maxLength": 64,
          "description": "A device preset (GET /v1/devices lists them): its viewport, scale, mobile and touch emulation and user agent. Fields given explicitly win."
        },
        "mobile": {
          "type": "boolean",
          "description": "Mobile emulation: the page's meta viewport applies, scrollbars overlay the page. Default: the device preset's, else false."
        },
        "has_touch": {
          "type": "boolean",
          "description": "Touch support: touch events, navigator.maxTouchPoints 5, (pointer: coarse). Default: the device preset's, else false."
        },
        "landscape": {
          "type": "boolean",
          "description": "Width and height swapped (the device preset's, or the request's), then capped at the plan's maximum like width and height."
        },
        "metadata": {
          "type": "boolean",
          "description": "The 201 also carries `metadata`: the page title, description, final URL, HTTP status, Open Graph title, description and image, and icon URL (absent values are null)."
        },
        "pdf_paper": {
          "type": "string",
          "enum": [
            "a4",
            "letter",
            "legal",
            "a3",
            "tabloid"
          ],
          "description": "format pdf: the paper size. Default a4."
        },
        "pdf_landscape": {
          "type": "boolean",
          "description": "format pdf: the paper turned on its side. Default false."
        },
        "pdf_print_background": {
          "type": "boolean",
          "description": "format pdf: background colours and images printed. Default true."
        },
        "pdf_single_page": {
          "type": "boolean",
          "description": "format pdf: one page as tall as the content (the paper's width), cut at the height bound. Default false."
        },
        "image_width": {
          "type": "integer",
          "minimum": 16,
          "description": "The delivered image's width in px (16 to the plan's max_width). The page still renders at width x height (or full page); the image is scaled to this. With only image_width, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf."
        },
        "image_height": {
          "type": "integer",
          "minimum": 16,
          "description": "The delivered image's height in px (16 to the plan's max_height). The page still renders at width x height (or full page); the image is scaled to this. With only image_height, the other side follows the image's aspect ratio; with both, image_fit says how. Not with pdf."
        },
        "image_fit": {
          "type": "string",
          "enum": [
            "cover",
            "contain",
            "fill"
          ],
          "description": "With both image_width and image_height: cover (default) scales the image to cover both and crops it from the top centre; contain scales it to fit inside both (no padding: one side may come out smaller); fill stretches it to both."
        },
        "base_url": {
          "type": "string",
          "description": "With html or markdown: the absolute http(s) URL the document is shown at, which its relative links resolve against. Checked like url; nothing is fetched from it for the document itself."
        },
        "content": {
          "type": "array",
          "items": {
            "type": "string",
            "enum": [
              "html",
              "text",
              "markdown"
            ]
          },
          "uniqueItems": true,
          "maxItems": 3,
          "description": "Keep the rendered page's content beside the image: \"html\" (its DOM as HTML), \"text\" (its visible text), \"markdown\" (its DOM as Markdown); any of them. Each is hosted with the image's retention, at most 5 MiB (cut there, content_truncated). The answer adds content: {html?, text?, markdown?} URLs."
        },
        "proxy": {
          "type": "string",
          "minLength": 1,
          "maxLength": 2048,
          "description": "Where the page's traffic goes out: an operator proxy's id (GET /v1/proxies), or your own proxy as `http://`, `https://`, `socks5://` or `socks5h://` URL, credentials allowed (`socks5://user:pass@host:1080`). Your own proxy must be on a public address. Its credentials are never logged nor answered. Not with `proxy_country`."
        },
        "proxy_country": {
          "type": "string",
          "minLength": 2,
          "maxLength": 2,
          "description": "Go out through an operator proxy serving this country (ISO 3166-1 alpha-2, `de`), one in turn when several do. Not with `proxy`."
        },
        "geolocation": {
          "type": "object",
          "required": [
            "latitude",
            "longitude"
          ],
          "properties": {
            "latitude": {
              "type": "number",
              "minimum": -90,
              "maximum": 90
            },
            "longitude": {
              "type": "number",
              "minimum": -180,
              "maximum": 180
            },
            "accuracy": {
              "type": "number",
              "minimum": 0,
              "maximum": 100000,
              "description": "Metres; default 100."
            }
          },
          "additionalProperties": false,
          "description": "The position the page's Geolocation API reports, permission granted (without it the page is denied). Goes well with `timezone`, `locale` and `proxy_country`."
        },
        "storage": {
          "type": "object",
          "required": [
            "destination"
          ],
          "properties": {
            "destination": {
              "type": "string",
              "pattern": "^dst_[0-9A-Za-z]{24}$",
              "description": "One of your storage destinations (POST /v1/storage-destinations)."
            },
            "path": {
              "type": "string",
              "minLength": 1,
              "maxLength": 512,
              "description": "The key under the destination's prefix; fields {id} {hash} {ext} {year} {month} {day} {host}. Default \"{id}.{ext}\"."
            },
            "hosted": {
              "type": "boolean",
              "description": "false: no copy is kept here (no image_url); always rendered anew."
            }
          },
          "additionalProperties": false,
          "description": "Write the capture into your own S3-compatible bucket too (docs/destinations.md). An upload that fails is a 502 storage_destination_error, with no unit spent."
        }
      }
    },
    "every": {
      "anyOf": [
        {
          "type": "string",
          "enum": [
            "15m"
          ]
        },
        {
          "type": "string",
          "enum": [
            "1h"
          ]
        },
        {
          "type": "string",
          "enum": [
            "6h"
          ]
        },
        {
          "type": "string",
          "enum": [
            "1d"
          ]
        },
        {
          "type": "string",
          "enum": [
            "7d"
          ]
        }
      ],
      "description": "How often it runs; not below the plan's min_monitor_interval."
    },
    "threshold": {
      "type": "number",
      "minimum": 0.0001,
      "maximum": 1,
      "description": "The share of pixels that must change for a run to count as changed.",
      "default": 0.001
    },
    "ignore_selectors": {
      "type": "array",
      "items": {
        "type": "string",
        "minLength": 1,
        "maxLength": 500
      },
      "maxItems": 50,
      "description": "Hidden before each capture, like hide_selectors."
    },
    "webhook_url": {
      "type": "string",
      "maxLength": 2048,
      "description": "Where monitor.changed and monitor.failed are sent (Standard Webhooks)."
    }
  },
  "additionalProperties": false
};
