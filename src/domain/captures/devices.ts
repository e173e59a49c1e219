/**
 * Device presets (`device`, docs/api.md, "Devices"), listed by GET /v1/devices. Phones and
 * tablets are puppeteer-core's own device descriptors (`KnownDevices`, named in `source`;
 * test/devices.test.ts checks every value against the installed puppeteer), laptops and
 * desktops are common screen sizes with the capture's default user agent (`userAgent: null`). Names
 * are stable lowercase slugs: a preset may be added, never renamed.
 */
export interface DevicePreset {
  /** The value of `device`. */
  name: string;
  label: string;
  /** puppeteer-core's KnownDevices name it comes from; null for our own laptops and desktops. */
  source: string | null;
  width: number;
  height: number;
  deviceScaleFactor: number;
  mobile: boolean;
  hasTouch: boolean;
  /** null: the capture's default (Chrome with the engine's version, docs/engine.md). */
  userAgent: string | null;
}

const laptop = (
  name: string,
  label: string,
  width: number,
  height: number,
  deviceScaleFactor: number,
): DevicePreset => ({
  name,
  label,
  source: null,
  width,
  height,
  deviceScaleFactor,
  mobile: false,
  hasTouch: false,
  userAgent: null,
});

export const DEVICES: readonly DevicePreset[] = [
  {
    name: 'iphone-se',
    label: 'iPhone SE',
    source: 'iPhone SE',
    width: 320,
    height: 568,
    deviceScaleFactor: 2,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 10_3_1 like Mac OS X) AppleWebKit/603.1.30 (KHTML, like Gecko) Version/10.0 Mobile/14E304 Safari/602.1',
  },
  {
    name: 'iphone-12-mini',
    label: 'iPhone 12 Mini',
    source: 'iPhone 12 Mini',
    width: 375,
    height: 812,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 14_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.4 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iphone-13',
    label: 'iPhone 13',
    source: 'iPhone 13',
    width: 390,
    height: 844,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 15_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.4 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iphone-13-pro-max',
    label: 'iPhone 13 Pro Max',
    source: 'iPhone 13 Pro Max',
    width: 428,
    height: 926,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 15_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.4 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iphone-14',
    label: 'iPhone 14',
    source: 'iPhone 14',
    width: 390,
    height: 663,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iphone-14-pro-max',
    label: 'iPhone 14 Pro Max',
    source: 'iPhone 14 Pro Max',
    width: 430,
    height: 739,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 16_6 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.6 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iphone-15',
    label: 'iPhone 15',
    source: 'iPhone 15',
    width: 393,
    height: 659,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iphone-15-pro',
    label: 'iPhone 15 Pro',
    source: 'iPhone 15 Pro',
    width: 393,
    height: 659,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'iphone-15-pro-max',
    label: 'iPhone 15 Pro Max',
    source: 'iPhone 15 Pro Max',
    width: 430,
    height: 739,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'pixel-3',
    label: 'Pixel 3',
    source: 'Pixel 3',
    width: 393,
    height: 786,
    deviceScaleFactor: 2.75,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 9; Pixel 3 Build/PQ1A.181105.017.A1) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/66.0.3359.158 Mobile Safari/537.36',
  },
  {
    name: 'pixel-4',
    label: 'Pixel 4',
    source: 'Pixel 4',
    width: 353,
    height: 745,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 10; Pixel 4) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/81.0.4044.138 Mobile Safari/537.36',
  },
  {
    name: 'pixel-5',
    label: 'Pixel 5',
    source: 'Pixel 5',
    width: 393,
    height: 851,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 11; Pixel 5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0.4812.0 Mobile Safari/537.36',
  },
  {
    name: 'galaxy-s8',
    label: 'Galaxy S8',
    source: 'Galaxy S8',
    width: 360,
    height: 740,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 7.0; SM-G950U Build/NRD90M) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/62.0.3202.84 Mobile Safari/537.36',
  },
  {
    name: 'galaxy-s5',
    label: 'Galaxy S5',
    source: 'Galaxy S5',
    width: 360,
    height: 640,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 5.0; SM-G900P Build/LRX21T) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/75.0.3765.0 Mobile Safari/537.36',
  },
  {
    name: 'moto-g4',
    label: 'Moto G4',
    source: 'Moto G4',
    width: 360,
    height: 640,
    deviceScaleFactor: 3,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 7.0; Moto G (4)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0.4812.0 Mobile Safari/537.36',
  },
  {
    name: 'ipad',
    label: 'iPad (gen 7)',
    source: 'iPad (gen 7)',
    width: 810,
    height: 1080,
    deviceScaleFactor: 2,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.4 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'ipad-mini',
    label: 'iPad Mini',
    source: 'iPad Mini',
    width: 768,
    height: 1024,
    deviceScaleFactor: 2,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPad; CPU OS 11_0 like Mac OS X) AppleWebKit/604.1.34 (KHTML, like Gecko) Version/11.0 Mobile/15A5341f Safari/604.1',
  },
  {
    name: 'ipad-pro-11',
    label: 'iPad Pro 11',
    source: 'iPad Pro 11',
    width: 834,
    height: 1194,
    deviceScaleFactor: 2,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPad; CPU OS 12_2 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/15.4 Mobile/15E148 Safari/604.1',
  },
  {
    name: 'ipad-pro-12-9',
    label: 'iPad Pro',
    source: 'iPad Pro',
    width: 1024,
    height: 1366,
    deviceScaleFactor: 2,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (iPad; CPU OS 11_0 like Mac OS X) AppleWebKit/604.1.34 (KHTML, like Gecko) Version/11.0 Mobile/15A5341f Safari/604.1',
  },
  {
    name: 'galaxy-tab-s4',
    label: 'Galaxy Tab S4',
    source: 'Galaxy Tab S4',
    width: 712,
    height: 1138,
    deviceScaleFactor: 2.25,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; Android 8.1.0; SM-T837A) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/70.0.3538.80 Safari/537.36',
  },
  {
    name: 'kindle-fire-hdx',
    label: 'Kindle Fire HDX',
    source: 'Kindle Fire HDX',
    width: 800,
    height: 1280,
    deviceScaleFactor: 2,
    mobile: true,
    hasTouch: true,
    userAgent:
      'Mozilla/5.0 (Linux; U; en-us; KFAPWI Build/JDQ39) AppleWebKit/535.19 (KHTML, like Gecko) Silk/3.13 Safari/535.19 Silk-Accelerated=true',
  },
  laptop('laptop', 'Laptop (1366x768)', 1366, 768, 1),
  laptop('laptop-hidpi', 'Laptop, HiDPI (1440x900 at 2x)', 1440, 900, 2),
  laptop('macbook-air-13', 'MacBook Air 13" (1470x956 at 2x)', 1470, 956, 2),
  laptop('macbook-pro-14', 'MacBook Pro 14" (1512x982 at 2x)', 1512, 982, 2),
  laptop('macbook-pro-16', 'MacBook Pro 16" (1728x1117 at 2x)', 1728, 1117, 2),
  laptop('desktop', 'Desktop (1920x1080)', 1920, 1080, 1),
  laptop('desktop-1440p', 'Desktop (2560x1440)', 2560, 1440, 1),
  laptop('desktop-4k', 'Desktop 4K (3840x2160)', 3840, 2160, 1),
];

const BY_NAME = new Map(DEVICES.map((d) => [d.name, d]));

export function findDevice(name: string): DevicePreset | undefined {
  return BY_NAME.get(name);
}
